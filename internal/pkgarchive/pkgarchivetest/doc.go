// Package pkgarchivetest builds gzip-compressed tar archives for tests of
// registry uploads, including hostile ones: links, devices and FIFOs,
// names that climb out of the root, and archives that decompress to far
// more than they weigh (entries or trailing data made of zeros).
package pkgarchivetest
