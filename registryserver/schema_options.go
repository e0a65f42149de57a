package registryserver

// WithSchemaDir serves the JSON Schemas (GET /schemas/<file>) from the
// files of dir, and checks every upload's registry.json against dir's
// registry-item.json, as the reference's SCHEMA_DIR does. A file dir lacks
// is served from the embedded schemas (and then only the embedded
// manifest schema is enforced); a dir that does not exist is logged as a
// warning by [New]. The default is "": the storage's own schema/<file>
// ([layout.Schema]; the reference's default SCHEMA_DIR is
// <STORAGE_ROOT>/schema), else the embedded schema.
func WithSchemaDir(dir string) Option {
	return func(o *options) error {
		o.schemaDir = dir
		return nil
	}
}
