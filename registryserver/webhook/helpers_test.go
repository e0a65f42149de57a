package webhook_test

import (
	"fmt"
	"io/fs"
)

func errNotExist() error { return fs.ErrNotExist }

func toString(v any) string { return fmt.Sprint(v) }
