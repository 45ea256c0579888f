//go:build !unix

package plugin

import (
	"io/fs"
	"os"
)

const readFlags = os.O_RDONLY

func linkCount(fs.FileInfo) uint64 { return 1 }
