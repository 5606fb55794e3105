package main

import (
	"context"
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/store"
	"github.com/switchboard-dev/switchboard/shared/tenant"
	"github.com/switchboard-dev/switchboard/shared/vector"
)

// printTokenIndex prints the late-interaction index's size: in memory, as
// stored (token shards and codec) and as float32 vectors would take, from
// one more search for question (which the evaluation has built the index for).
func printTokenIndex(ctx context.Context, svc *vector.Service, blobs store.Blobs, c tenant.Caller, alias, question string) error {
	lo, err := svc.LateInteraction(ctx, c, vector.LateInput{Question: question, Stores: []string{alias}, K: 1})
	if err != nil {
		return err
	}
	var shards, codecs int64
	for _, dir := range []string{"tokens/", "colbert/"} {
		opts := &store.ListOptions{}
		for {
			page, err := blobs.List(ctx, tenant.BlobPrefix(c.Tenant)+"vector/"+alias+"/"+dir, opts)
			if err != nil {
				return err
			}
			for _, b := range page.Blobs {
				if dir == "tokens/" {
					shards += b.Size
				} else {
					codecs += b.Size
				}
			}
			if page.Next == "" {
				break
			}
			opts.Cursor = page.Next
		}
	}
	f32 := lo.Tokens * int64(lo.Dims) * 4
	fmt.Printf("late interaction (%s/%s, %d dims): %d tokens; float32 %.1f MiB; stored %.1f MiB (token shards) + %.1f KiB (codec): %.2fx smaller; compression_ratio %.2f (per token); index in memory %.1f MiB\n",
		lo.Provider, lo.Model, lo.Dims, lo.Tokens, mib(f32), mib(shards), float64(codecs)/1024, float64(f32)/float64(shards+codecs), lo.CompressionRatio, mib(lo.IndexBytes))
	return nil
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }
