package registryserver

import "context"

// CensusUpkeep runs the census's upkeep (expired reports removed, the
// day's history) once, now, after the import of stored reports.
func (h *Handler) CensusUpkeep() {
	<-h.census.Imported()
	h.census.Upkeep()
}

// CensusImported waits until the reports older servers kept in storage
// are imported.
func (h *Handler) CensusImported() { <-h.census.Imported() }

// SyncAudit returns once the audit log events recorded so far are
// written.
func (h *Handler) SyncAudit() { _ = h.core.Auditor.Sync(context.Background()) }
