// Package colbert is late interaction (ColBERT): each chunk is kept as one
// vector per token, and a query scores a chunk by MaxSim, the sum over its
// own token vectors of the best dot product with any of the chunk's. Token
// vectors come from a [multivector.Embedder]; they are stored compressed as
// ColBERTv2 and PLAID do, the nearest of a store's k-means centroids plus a
// residual of 1 or 2 bits a dimension, about 34 bytes a 128-dimension token
// instead of 512.
//
//	toks, err := emb.EmbedTokens(ctx, multivector.Request{Texts: chunks, Purpose: provider.ForDocument})
//	codec, err := colbert.Train(ctx, sampleOf(toks), &colbert.TrainOptions{Seed: 1})
//	t, err := codec.Compress(toks.Tokens[i])                      // per chunk
//	b, err := codec.EncodeShard(colbert.Shard{IDs: ids, Tokens: ts}) // an immutable shard
//	s, err := codec.DecodeShard(b)
//	x := colbert.NewIndex(codec, nil)
//	err = x.Add(s)
//	q, err := emb.EmbedTokens(ctx, multivector.Request{Texts: []string{question}, Purpose: provider.ForQuery})
//	res, err := x.Search(ctx, q.Tokens[0], nil)            // candidates by centroid
//	res, err = x.Rerank(ctx, q.Tokens[0], hybridTopK, nil)  // or given ones
//	// res.Hits, res.TokenInteractions; x.CompressionRatio()
//
// The codec and each shard are versioned, checksummed binary formats (see
// [Codec.MarshalBinary] and [Codec.EncodeShard]); their parsers check every
// count against the bytes left before allocating.
package colbert
