package conformance

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"sync"
)

// redPixelPNG returns a 1x1 red PNG, the minimal image the suite suggests.
var redPixelPNG = sync.OnceValue(func() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.RGBA{R: 255, A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		panic(err) // encoding an in-memory image into a buffer cannot fail
	}
	return b.Bytes()
})

// silentWAV returns a 50 ms silent WAV: 8 kHz, mono, 8-bit PCM.
var silentWAV = sync.OnceValue(func() []byte {
	const rate, samples = 8000, 400
	var b bytes.Buffer
	le := func(v any) { binary.Write(&b, binary.LittleEndian, v) }
	b.WriteString("RIFF")
	le(uint32(36 + samples))
	b.WriteString("WAVEfmt ")
	le(uint32(16))   // fmt chunk size
	le(uint16(1))    // PCM
	le(uint16(1))    // mono
	le(uint32(rate)) // sample rate
	le(uint32(rate)) // byte rate: rate * channels * bytes per sample
	le(uint16(1))    // block align
	le(uint16(8))    // bits per sample
	b.WriteString("data")
	le(uint32(samples))
	b.Write(bytes.Repeat([]byte{128}, samples)) // 8-bit PCM is unsigned: 128 is silence
	return b.Bytes()
})

func base64Of(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
