// Package graph is the entity graph behind rag_graphrag and
// rag_iris_global_graphrag (issue 15): entities extracted from a store's
// chunks, kept as one immutable shard per document, united into a store's
// graph, searched locally by Personalized PageRank (HippoRAG) and globally
// over community reports (GraphRAG).
//
//	s, _ := graph.NewShard(ctx, doc, graph.Heuristic{}, nil, graph.Limits{}) // per document, at ingest
//	b, _ := s.MarshalBinary()                                               // stored beside its chunk shard
//	g, _ := graph.Build(liveShards)                                         // the store's graph
//	local, _ := g.Local(ctx, question, graph.DefaultLocalOptions)           // PPR ranking of chunks
//	fused := graph.Fuse(k, 1, hybridHits, local.Hits)                       // rrf_score
//	comms := g.Communities(seed)                                            // levels, finest first
//	reports, _ := g.Reports(ctx, comms, chunkTexts, nil, "")                // stored with the manifest
//	answer, _ := graph.Global(ctx, question, reports, graph.GlobalOptions{Level: -1})
//
// [Heuristic] extracts offline and deterministically; [Prompted] asks a
// generator. Either way [NewShard] bounds what is kept ([Limits]).
package graph
