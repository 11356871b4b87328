package rundir

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// ErrUnsealed: a file read with Unseal has no seal line: it was written before its kind carried a
// checksum (or is not of that kind), so nothing vouches for its bytes.
var ErrUnsealed = errors.New("written without a checksum (an older layout)")

// ErrDamaged: a sealed file's payload does not match the sha256 its seal line records (a changed
// or corrupted file).
var ErrDamaged = errors.New("damaged: its bytes do not match the checksum written with them")

// sealPrefix starts every seal line: "vaisgplvm KIND sha256 HEX\n".
const sealPrefix = "vaisgplvm "

// Seal returns payload behind a seal line naming the file's kind (one word, e.g. "stored-training")
// and the hex sha256 of payload, for a file that Unseal checks before anything decodes it.
func Seal(kind string, payload []byte) []byte {
	sum := sha256.Sum256(payload)
	head := fmt.Sprintf("%s%s sha256 %s\n", sealPrefix, kind, hex.EncodeToString(sum[:]))
	return append([]byte(head), payload...)
}

// Unseal checks buf's seal line (Seal) and returns its payload. Errors: ErrUnsealed when buf does
// not start with a seal line of kind; ErrDamaged when the payload's sha256 differs from the one
// recorded (one flipped bit anywhere in the file gives one of the two).
func Unseal(kind string, buf []byte) ([]byte, error) {
	head := []byte(sealPrefix + kind + " sha256 ")
	rest, ok := bytes.CutPrefix(buf, head)
	if !ok {
		if bytes.HasPrefix(buf, []byte(sealPrefix)) {
			return nil, ErrDamaged // a seal line of another kind, or one with a changed byte
		}
		return nil, ErrUnsealed
	}
	const hexLen = 2 * sha256.Size
	if len(rest) < hexLen+1 || rest[hexLen] != '\n' {
		return nil, ErrDamaged
	}
	payload := rest[hexLen+1:]
	if sum := sha256.Sum256(payload); hex.EncodeToString(sum[:]) != string(rest[:hexLen]) { // lower-case hex, as Seal writes it
		return nil, ErrDamaged
	}
	return payload, nil
}
