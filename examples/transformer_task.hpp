// The synthetic sequence-to-sequence tasks of examples/transformer.cpp (and its benchmark):
// "reverse" (the target is the source backwards) and "copy", fixed-length sequences of random
// symbols. Ids: 0 is padding (unused: every sequence has the full length), 1 starts the
// decoder's input, 2..vocab-1 are the symbols.
#pragma once
#include <kerascpp/kerascpp.hpp>

#include <random>
#include <string>
#include <vector>

namespace examples::transformer {

constexpr std::int32_t kStartId = 1, kFirstSymbol = 2;

// n examples: {source, decoder inputs, positions, one-hot targets [n, length, vocab]}.
inline std::vector<kerascpp::Tensor> make_task(const std::string& task, std::int64_t n, std::int64_t length,
                                               std::int64_t vocab, std::uint64_t seed) {
  namespace K = kerascpp;
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<std::int32_t> symbol(kFirstSymbol, static_cast<std::int32_t>(vocab - 1));
  std::vector<std::int32_t> source(static_cast<std::size_t>(n * length)), decoder(source.size()),
      positions(source.size());
  std::vector<float> targets(static_cast<std::size_t>(n * length * vocab), 0.f);
  for (std::int64_t e = 0; e < n; ++e) {
    std::int32_t* src = &source[static_cast<std::size_t>(e * length)];
    for (std::int64_t t = 0; t < length; ++t) src[t] = symbol(gen);
    for (std::int64_t t = 0; t < length; ++t) {
      const std::int32_t target = task == "copy" ? src[t] : src[length - 1 - t];
      targets[static_cast<std::size_t>((e * length + t) * vocab + target)] = 1.f;
      // Teacher forcing: the decoder sees the start id, then the targets so far.
      if (t + 1 < length) decoder[static_cast<std::size_t>(e * length + t + 1)] = target;
      positions[static_cast<std::size_t>(e * length + t)] = static_cast<std::int32_t>(t);
    }
    decoder[static_cast<std::size_t>(e * length)] = kStartId;
  }
  return {K::Tensor::from_vector({n, length}, source), K::Tensor::from_vector({n, length}, decoder),
          K::Tensor::from_vector({n, length}, positions), K::Tensor::from_vector({n, length, vocab}, targets)};
}

}  // namespace examples::transformer
