package registryserver

import "context"

// CensusUpkeep runs the census's upkeep (expired reports removed, the
// day's history) once, now, after the import of stored reports (nothing
// when the census is off).
func (h *Handler) CensusUpkeep() {
	if h.census == nil {
		return
	}
	<-h.census.Imported()
	h.census.Upkeep()
}

// CensusImported waits until the reports older servers kept in storage
// are imported (at once when the census is off).
func (h *Handler) CensusImported() {
	if h.census != nil {
		<-h.census.Imported()
	}
}

// SyncAudit returns once the audit log events recorded so far are
// written.
func (h *Handler) SyncAudit() { _ = h.core.Auditor.Sync(context.Background()) }
