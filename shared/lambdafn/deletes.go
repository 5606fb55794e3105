package lambdafn

import (
	"context"
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/catalog"
	"github.com/switchboard-dev/switchboard/shared/store"
)

// ForFunction returns d as function f runs with it: unless f's catalog entry
// says it deletes items ([catalog.Tool.Deletes]), a table that refuses
// deletes, alone or in a transaction, as IAM refuses dynamodb:DeleteItem to
// its role on AWS (the template grants it to the functions that delete
// only). So a function that deletes without the mark fails every test that
// runs it, here, rather than its calls once deployed. [Start] and package
// local apply it to each function.
func ForFunction(d Deps, f catalog.Function) Deps {
	if d.Table != nil && !f.Deletes {
		d.Table = noDeletes{Table: d.Table, function: f.Path}
	}
	return d
}

// noDeletes is a table that refuses deletes; see [ForFunction].
type noDeletes struct {
	store.Table
	function string
}

func (t noDeletes) refuse(pk, sk string) error {
	return fmt.Errorf("lambdafn: function %s deletes item %s/%s, but its catalog entry does not say it deletes (Deletes), so it may not", t.function, pk, sk)
}

// Delete implements [store.Table] by refusing.
func (t noDeletes) Delete(_ context.Context, pk, sk string, _ store.Condition) error {
	return t.refuse(pk, sk)
}

// Transact implements [store.Table]: a transaction with a delete is refused
// whole, nothing written.
func (t noDeletes) Transact(ctx context.Context, writes ...store.Write) error {
	for _, w := range writes {
		if w.Kind == store.WriteDelete {
			return t.refuse(w.Item.PK, w.Item.SK)
		}
	}
	return t.Table.Transact(ctx, writes...)
}
