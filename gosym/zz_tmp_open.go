package gosym

import (
	"encoding/binary"
	"errors"

	"github.com/gosym-dev/gosym/object"
)

type objectSectionHeader = object.SectionHeader
type byteOrder = binary.ByteOrder

type closerObj interface {
	Close() error
}

func objectOpen(name string) (interface {
	closerObj
	objfileObject
}, error) {
	return nil, errors.New("not yet")
}

type objfileObject = interface {
	Sections() ([]objectSectionHeader, error)
	SectionData(int) ([]byte, error)
	Endian() byteOrder
}
