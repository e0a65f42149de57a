/**
 * Returns a friendly greeting for `name`.
 *
 * This is the package entry point; replace it with your own code.
 *
 * @param {string} name
 * @returns {string}
 */
export function greet(name) {
  const who = name.trim() || "world";
  return `Hello, ${who}!`;
}
