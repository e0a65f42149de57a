package registryserver

// CensusUpkeep runs the census's upkeep (expired reports removed, the
// day's history) once, now, after the import of stored reports.
func (h *Handler) CensusUpkeep() {
	<-h.census.Imported()
	h.census.Upkeep()
}

// CensusImported waits until the reports older servers kept in storage
// are imported.
func (h *Handler) CensusImported() { <-h.census.Imported() }
