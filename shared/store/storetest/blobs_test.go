package storetest

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/store"
)

func TestBlobs(t *testing.T) {
	EachBlobs(t, func(t *testing.T, b store.Blobs) { RunBlobs(t, b) })
}
