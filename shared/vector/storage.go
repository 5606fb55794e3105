package vector

import (
	"context"
	"fmt"

	"github.com/switchboard-dev/switchboard/shared/tenant"
)

// Storage lists the caller's stores a search can use, as the seed's
// optimizer_vs-storage does: stores are offered only when they were built with
// the embedding model this server is configured with (the seed's "enabled
// embedding models"); the others are listed apart as hidden, with the reason.
func (s *Service) Storage(ctx context.Context, c tenant.Caller, _ StorageInput) (StorageOutput, error) {
	recs, err := s.allStores(ctx, c)
	if err != nil {
		return StorageOutput{}, err
	}
	out := StorageOutput{Stores: []StorageStore{}}
	p, m, d := s.embedderName()
	for _, r := range recs {
		if s.checkEmbedder(r) != nil {
			out.Hidden = append(out.Hidden, HiddenStore{Alias: r.Alias, Model: r.Provider + "/" + r.Model,
				Reason: fmt.Sprintf("built with embedder %s/%s (%d dimensions); this server embeds with %s/%s (%d dimensions)", r.Provider, r.Model, r.Dims, p, m, d)})
			continue
		}
		out.Stores = append(out.Stores, StorageStore{Alias: r.Alias, Description: r.Description, Model: r.Model,
			Provider: r.Provider, Dims: r.Dims, Documents: r.Documents, Chunks: r.Chunks})
	}
	return out, nil
}
