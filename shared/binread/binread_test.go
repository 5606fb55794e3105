package binread_test

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/switchboard-dev/switchboard/shared/binread"
)

var errBad = errors.New("bad data")

func TestReaderRefusesCountsPastTheDataAndKeepsTheFirstError(t *testing.T) {
	str := func(s string) []byte { return append(binary.AppendUvarint(nil, uint64(len(s))), s...) }
	tests := []struct {
		name string
		data []byte
		read func(r *binread.Reader) any
		want any
		fail bool
	}{
		{name: "a string reads its bytes", data: str("abc"), read: func(r *binread.Reader) any { return r.String("name") }, want: "abc"},
		{name: "a string longer than the data fails", data: []byte{9, 'a'}, read: func(r *binread.Reader) any { return r.String("name") }, want: "", fail: true},
		{name: "a count of more items than bytes allow fails", data: []byte{3, 0, 0, 0, 0, 0, 0, 0}, read: func(r *binread.Reader) any { return r.Count("items", 4) }, want: 0, fail: true},
		{name: "a count within the data reads", data: []byte{2, 0, 0, 0, 0, 0, 0, 0, 0}, read: func(r *binread.Reader) any { return r.Count("items", 4) }, want: 2},
		{name: "an int past its limit fails", data: []byte{7}, read: func(r *binread.Reader) any { return r.Int("dims", 6) }, want: 0, fail: true},
		{name: "a truncated varint fails", data: []byte{0x80}, read: func(r *binread.Reader) any { return r.Uvarint("n") }, want: uint64(0), fail: true},
		{name: "reads after a failure read nothing", data: append([]byte{9}, str("x")...), read: func(r *binread.Reader) any {
			r.Int("small", 1)
			return r.String("then")
		}, want: "", fail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := binread.New(tt.data, "test: decode", errBad)
			if got := tt.read(r); got != tt.want {
				t.Errorf("read %v, want %v", got, tt.want)
			}
			if err := r.Err(); (err != nil) != tt.fail || err != nil && !errors.Is(err, errBad) {
				t.Errorf("error %v, want failure %v wrapping the sentinel", err, tt.fail)
			}
		})
	}
}
