package storetest

import (
	"testing"

	"github.com/switchboard-dev/switchboard/shared/store"
)

func TestTable(t *testing.T) {
	EachTable(t, func(t *testing.T, tbl store.Table) { RunTable(t, tbl) })
}
