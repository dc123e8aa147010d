// Package pefile decodes PE files for package object and package
// peobj, which document what it presents (see objfile.Decoder).
package pefile

import (
	"debug/pe"
	"encoding/binary"
	"io"

	"github.com/gosym-dev/gosym/internal/objfile"
)

// File is a PE file decoded for package object: an [objfile.Decoder]. A File is safe for
// concurrent use.
type File struct {
	machine   uint16
	imageBase uint64
	secs      objfile.SectionTable

	// A File made by NewBytes reads data; one made by New reads pf.
	data   []byte
	pf     *pe.File
	symoff uint64 // PointerToSymbolTable (NewBytes)
	nsyms  uint64 // NumberOfSymbols (NewBytes)
	syms   objfile.SymbolMap
}

// Section characteristics debug/pe does not define.
const (
	scnLnkInfo   = 0x00000200
	scnLnkRemove = 0x00000800
)

// sectionHeader converts a PE section header.
func sectionHeader(name string, imageBase uint64, virtualSize, virtualAddress, sizeOfRawData, pointerToRawData, characteristics uint32) objfile.SectionHeader {
	h := objfile.SectionHeader{
		Name:     name,
		Addr:     imageBase + uint64(virtualAddress),
		Size:     uint64(virtualSize),
		Offset:   uint64(pointerToRawData),
		FileSize: uint64(min(virtualSize, sizeOfRawData)),
	}
	if virtualSize == 0 { // object files leave VirtualSize 0
		h.Size = uint64(sizeOfRawData)
		h.FileSize = uint64(sizeOfRawData)
	}
	if pointerToRawData == 0 { // uninitialized data
		h.FileSize = 0
	}
	if characteristics&(pe.IMAGE_SCN_MEM_DISCARDABLE|scnLnkRemove|scnLnkInfo) == 0 {
		h.Flags |= objfile.SectionAlloc
	}
	if characteristics&(pe.IMAGE_SCN_MEM_EXECUTE|pe.IMAGE_SCN_CNT_CODE) != 0 {
		h.Flags |= objfile.SectionExec
	}
	if characteristics&pe.IMAGE_SCN_MEM_WRITE != 0 {
		h.Flags |= objfile.SectionWrite
	}
	return h
}

// New returns f as an Object. The result is a *File; its SectionData reads
// and copies the section's bytes.
func New(f *pe.File) *File {
	ff := &File{machine: f.Machine, pf: f, secs: objfile.SectionTable{Format: "pe", Read: []io.ReaderAt{}}}
	switch oh := f.OptionalHeader.(type) {
	case *pe.OptionalHeader32:
		ff.imageBase = uint64(oh.ImageBase)
	case *pe.OptionalHeader64:
		ff.imageBase = oh.ImageBase
	}
	for _, s := range f.Sections {
		ff.secs.Headers = append(ff.secs.Headers, sectionHeader(s.Name, ff.imageBase,
			s.VirtualSize, s.VirtualAddress, s.Size, s.Offset, s.Characteristics))
		ff.secs.Read = append(ff.secs.Read, s.ReaderAt)
	}
	return ff
}

// Endian returns binary.LittleEndian: every PE target is little-endian.
func (f *File) Endian() binary.ByteOrder { return binary.LittleEndian }

// Sections returns the section headers in the order of the section table.
// The caller may modify the returned slice.
func (f *File) Sections() ([]objfile.SectionHeader, error) { return f.secs.Sections() }

// SectionData returns the FileSize bytes of section i. For a File made by
// NewBytes the result aliases the bytes given to NewBytes and must not be
// modified.
func (f *File) SectionData(i int) ([]byte, error) { return f.secs.SectionData(i) }

// Format returns "pe".
func (f *File) Format() string { return "pe" }

// Arch returns the GOARCH name of the file's machine, or "" if Go does not
// know it.
func (f *File) Arch() string {
	switch f.machine {
	case pe.IMAGE_FILE_MACHINE_I386:
		return "386"
	case pe.IMAGE_FILE_MACHINE_AMD64:
		return "amd64"
	case pe.IMAGE_FILE_MACHINE_ARM, pe.IMAGE_FILE_MACHINE_THUMB, pe.IMAGE_FILE_MACHINE_ARMNT:
		return "arm"
	case pe.IMAGE_FILE_MACHINE_ARM64:
		return "arm64"
	case pe.IMAGE_FILE_MACHINE_RISCV64:
		return "riscv64"
	case pe.IMAGE_FILE_MACHINE_LOONGARCH64:
		return "loong64"
	}
	return ""
}
