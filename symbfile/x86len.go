package symbfile

// A fast path for the x86 decoder: the length of the most common
// instructions of Go's amd64 and 386 code follows from their first bytes
// alone (the opcode, and the ModRM and SIB bytes where there are), and
// golang.org/x/arch decodes every encoding of these opcodes as an
// instruction of that length; for these, the walk over a function's code
// need not call x86asm.Decode, which spends about 250 ns on each (its
// decoder program, and an allocation per memory operand). Everything else
// (other prefixes, other opcodes, code that ends within the instruction)
// is decoded by x86asm.Decode, so the walk finds the same instructions,
// and so the same calls, as go tool objdump: TestX86LenAgrees checks
// each form against x86asm on random bytes, TestX86Walk whole binaries.

// The forms of the one-byte opcodes handled, after an optional REX prefix
// (amd64 only).
const (
	xNone    = iota // decoded by x86asm
	xModRM          // ModRM operand, no immediate
	xModRM8         // ModRM operand and an 8-bit immediate
	xModRM32        // ModRM operand and a 32-bit immediate
	xLEA            // LEA: ModRM operand, which must be memory
	xMovImm         // C7 /0: ModRM operand and a 32-bit immediate
	x1              // the opcode alone
	xRel8           // an 8-bit displacement or immediate
	xRel32          // a 32-bit displacement or immediate
	xCall           // E8: CALL with a 32-bit displacement
	x0F             // the two-byte opcodes 0F xx
)

var x86Forms = func() (t [256]uint8) {
	// ADD, OR, AND, SUB, XOR, CMP (r/m, r and r, r/m), TEST, MOV.
	for _, op := range []byte{0x01, 0x03, 0x09, 0x0b, 0x21, 0x23, 0x29, 0x2b, 0x31, 0x33, 0x39, 0x3b, 0x85, 0x89, 0x8b} {
		t[op] = xModRM
	}
	t[0x83] = xModRM8  // arithmetic with an 8-bit immediate
	t[0x81] = xModRM32 // arithmetic with a 32-bit immediate
	t[0x8d] = xLEA
	t[0xc7] = xMovImm
	for op := 0x50; op <= 0x5f; op++ {
		t[op] = x1 // PUSH, POP
	}
	t[0x90], t[0xc3] = x1, x1 // NOP, RET
	t[0xeb] = xRel8           // JMP
	for op := 0x70; op <= 0x7f; op++ {
		t[op] = xRel8 // Jcc
	}
	t[0xe9] = xRel32 // JMP
	for op := 0xb8; op <= 0xbf; op++ {
		t[op] = xRel32 // MOV r32, imm32 (not with REX: REX.W makes it imm64)
	}
	t[0xe8] = xCall
	t[0x0f] = x0F
	return t
}()

// x86Len returns the length of the instruction at the start of code, and
// whether it is a call, if it is one of the forms the fast path handles
// and lies whole in code; else 0. mode is 64 or 32.
func x86Len(code []byte, mode int) (n int, call bool) {
	p := 0
	rex := false
	if mode == 64 && len(code) > 0 && code[0]&0xf0 == 0x40 {
		p, rex = 1, true
	}
	if p >= len(code) {
		return 0, false
	}
	op := code[p]
	p++
	switch x86Forms[op] {
	case xModRM:
		n = modrmEnd(code, p)
	case xModRM8:
		if n = modrmEnd(code, p); n > 0 {
			n++
		}
	case xModRM32:
		if n = modrmEnd(code, p); n > 0 {
			n += 4
		}
	case xLEA:
		if p < len(code) && code[p]>>6 != 3 {
			n = modrmEnd(code, p)
		}
	case xMovImm:
		if p < len(code) && code[p]>>3&7 == 0 {
			if n = modrmEnd(code, p); n > 0 {
				n += 4
			}
		}
	case x1:
		n = p
	case xRel8:
		n = p + 1
	case xRel32:
		if !rex {
			n = p + 4
		}
	case xCall:
		if !rex {
			n, call = p+4, true
		}
	case x0F:
		if p >= len(code) {
			return 0, false
		}
		op2 := code[p]
		p++
		switch {
		case op2 >= 0x80 && op2 <= 0x8f: // Jcc rel32
			n = p + 4
		case op2 == 0xb6 || op2 == 0xb7 || op2 == 0xbe || op2 == 0xbf || op2 == 0x10 || op2 == 0x11:
			// MOVZX, MOVSX; MOVUPS.
			n = modrmEnd(code, p)
		}
	}
	if n == 0 || n > len(code) {
		return 0, false
	}
	return n, call
}

// modrmEnd returns where the operand whose ModRM byte is code[p] ends, in
// 32- or 64-bit addressing (no address-size prefix), or 0 if code ends
// before its SIB byte.
func modrmEnd(code []byte, p int) int {
	if p >= len(code) {
		return 0
	}
	m := code[p]
	p++
	mod, rm := m>>6, m&7
	if mod == 3 {
		return p
	}
	if rm == 4 { // a SIB byte
		if p >= len(code) {
			return 0
		}
		base := code[p] & 7
		p++
		if mod == 0 && base == 5 {
			p += 4
		}
	} else if mod == 0 && rm == 5 {
		p += 4 // RIP-relative (amd64) or absolute (386)
	}
	switch mod {
	case 1:
		p++
	case 2:
		p += 4
	}
	return p
}
