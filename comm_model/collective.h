// The collectives, algorithms, protocols and element types the model knows.
//
// Sizes follow nccl-tests: the "size" of a collective is the whole buffer in
// bytes (for AllGather the gathered output, for ReduceScatter the input
// before scattering, for AllToAll what one rank sends to all), and its bus
// bandwidth is the algorithm bandwidth times a factor that makes it
// comparable to a link's rate whatever the rank count (nccl-tests
// doc/PERFORMANCE.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace topo {

enum class Collective : uint8_t { AllReduce, AllGather, ReduceScatter, Broadcast, AllToAll };

// How the data moves. Ring and Tree are NCCL's algorithms of those names;
// Hierarchical reduces inside each host over NVLink first and then runs one
// ring per GPU slot (per rail) between hosts; Direct is the point-to-point
// exchange NCCL uses for AllToAll.
enum class Algorithm : uint8_t { Ring, Tree, Hierarchical, Direct };

// NCCL's wire protocols: LL (8-byte stores with inline flags, lowest
// latency), LL128 (128-byte lines, 120 bytes of payload), Simple (bulk
// copies behind memory fences, highest bandwidth).
enum class Protocol : uint8_t { LL, LL128, Simple };

enum class Dtype : uint8_t { Int8, Uint8, Fp8, Fp16, Bf16, Int32, Uint32, Fp32, Int64, Uint64, Fp64 };

std::string_view name(Collective c);  // "allreduce"
std::string_view name(Algorithm a);   // "ring"
std::string_view name(Protocol p);    // "simple"
std::string_view name(Dtype d);       // "fp16"

// Case-insensitive; accept the spellings of NCCL and nccl-tests too:
// "all_reduce", "AllReduce", "alltoall"; "LL128"; "half", "bfloat16", "float".
std::optional<Collective> parse_collective(std::string_view text);
std::optional<Algorithm> parse_algorithm(std::string_view text);
std::optional<Protocol> parse_protocol(std::string_view text);
std::optional<Dtype> parse_dtype(std::string_view text);

int dtype_bytes(Dtype d);

// busbw / algbw for `ranks` ranks, as nccl-tests computes it:
// AllReduce 2(n-1)/n; AllGather, ReduceScatter, AllToAll (n-1)/n; Broadcast 1.
double bus_factor(Collective c, int ranks);

// Whether NCCL runs collective `c` with algorithm `a`: Tree is for
// AllReduce only, Direct for AllToAll only, AllToAll has nothing else.
bool supports(Collective c, Algorithm a);

}  // namespace topo
