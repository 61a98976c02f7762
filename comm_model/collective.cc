#include "comm_model/collective.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

namespace topo {
namespace {

// Lower-case and without '_' or '-', so "All_Reduce" and "allreduce" meet.
std::string folded(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '_' || c == '-') continue;
    out.push_back(static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c));
  }
  return out;
}

template <typename T, size_t N>
std::optional<T> lookup(std::string_view text, const std::array<std::pair<std::string_view, T>, N>& table) {
  std::string key = folded(text);
  for (const auto& [spelling, value] : table)
    if (spelling == key) return value;
  return std::nullopt;
}

}  // namespace

std::string_view name(Collective c) {
  switch (c) {
    case Collective::AllReduce:
      return "allreduce";
    case Collective::AllGather:
      return "allgather";
    case Collective::ReduceScatter:
      return "reducescatter";
    case Collective::Broadcast:
      return "broadcast";
    case Collective::AllToAll:
      return "alltoall";
  }
  return "?";
}

std::string_view name(Algorithm a) {
  switch (a) {
    case Algorithm::Ring:
      return "ring";
    case Algorithm::Tree:
      return "tree";
    case Algorithm::Hierarchical:
      return "hierarchical";
    case Algorithm::Direct:
      return "direct";
  }
  return "?";
}

std::string_view name(Protocol p) {
  switch (p) {
    case Protocol::LL:
      return "ll";
    case Protocol::LL128:
      return "ll128";
    case Protocol::Simple:
      return "simple";
  }
  return "?";
}

std::string_view name(Dtype d) {
  switch (d) {
    case Dtype::Int8:
      return "int8";
    case Dtype::Uint8:
      return "uint8";
    case Dtype::Fp8:
      return "fp8";
    case Dtype::Fp16:
      return "fp16";
    case Dtype::Bf16:
      return "bf16";
    case Dtype::Int32:
      return "int32";
    case Dtype::Uint32:
      return "uint32";
    case Dtype::Fp32:
      return "fp32";
    case Dtype::Int64:
      return "int64";
    case Dtype::Uint64:
      return "uint64";
    case Dtype::Fp64:
      return "fp64";
  }
  return "?";
}

std::optional<Collective> parse_collective(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, Collective>, 5> table{{
      {"allreduce", Collective::AllReduce},
      {"allgather", Collective::AllGather},
      {"reducescatter", Collective::ReduceScatter},
      {"broadcast", Collective::Broadcast},
      {"alltoall", Collective::AllToAll},
  }};
  return lookup(text, table);
}

std::optional<Algorithm> parse_algorithm(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, Algorithm>, 4> table{{
      {"ring", Algorithm::Ring},
      {"tree", Algorithm::Tree},
      {"hierarchical", Algorithm::Hierarchical},
      {"direct", Algorithm::Direct},
  }};
  return lookup(text, table);
}

std::optional<Protocol> parse_protocol(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, Protocol>, 3> table{{
      {"ll", Protocol::LL},
      {"ll128", Protocol::LL128},
      {"simple", Protocol::Simple},
  }};
  return lookup(text, table);
}

std::optional<Dtype> parse_dtype(std::string_view text) {
  static constexpr std::array<std::pair<std::string_view, Dtype>, 23> table{{
      {"int8", Dtype::Int8},   {"char", Dtype::Int8},    {"uint8", Dtype::Uint8},   {"fp8", Dtype::Fp8},
      {"float8", Dtype::Fp8},  {"e4m3", Dtype::Fp8},     {"e5m2", Dtype::Fp8},      {"fp16", Dtype::Fp16},
      {"half", Dtype::Fp16},   {"float16", Dtype::Fp16}, {"bf16", Dtype::Bf16},     {"bfloat16", Dtype::Bf16},
      {"int32", Dtype::Int32}, {"int", Dtype::Int32},    {"uint32", Dtype::Uint32}, {"fp32", Dtype::Fp32},
      {"float", Dtype::Fp32},  {"float32", Dtype::Fp32}, {"int64", Dtype::Int64},   {"uint64", Dtype::Uint64},
      {"fp64", Dtype::Fp64},   {"double", Dtype::Fp64},  {"float64", Dtype::Fp64},
  }};
  return lookup(text, table);
}

int dtype_bytes(Dtype d) {
  switch (d) {
    case Dtype::Int8:
    case Dtype::Uint8:
    case Dtype::Fp8:
      return 1;
    case Dtype::Fp16:
    case Dtype::Bf16:
      return 2;
    case Dtype::Int32:
    case Dtype::Uint32:
    case Dtype::Fp32:
      return 4;
    case Dtype::Int64:
    case Dtype::Uint64:
    case Dtype::Fp64:
      return 8;
  }
  return 1;
}

double bus_factor(Collective c, int ranks) {
  if (ranks < 2) return 0;
  double n = ranks;
  switch (c) {
    case Collective::AllReduce:
      return 2 * (n - 1) / n;
    case Collective::AllGather:
    case Collective::ReduceScatter:
    case Collective::AllToAll:
      return (n - 1) / n;
    case Collective::Broadcast:
      return 1;
  }
  return 1;
}

bool supports(Collective c, Algorithm a) {
  if (c == Collective::AllToAll) return a == Algorithm::Direct;
  switch (a) {
    case Algorithm::Ring:
    case Algorithm::Hierarchical:
      return true;
    case Algorithm::Tree:
      return c == Collective::AllReduce;
    case Algorithm::Direct:
      return false;
  }
  return false;
}

}  // namespace topo
