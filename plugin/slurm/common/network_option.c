#include "plugin/slurm/common/network_option.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Slurm's own option values are case-insensitive; so are ours. */
static bool same_word(const char *a, size_t a_len, const char *b)
{
  return strlen(b) == a_len && strncasecmp(a, b, a_len) == 0;
}

static bool starts_with(const char *s, size_t len, const char *prefix)
{
  size_t n = strlen(prefix);
  return len >= n && strncasecmp(s, prefix, n) == 0;
}

static int fail(struct topo_network_request *request, char *error, size_t error_size,
                const char *format, ...) __attribute__((format(printf, 4, 5)));

static int fail(struct topo_network_request *request, char *error, size_t error_size,
                const char *format, ...)
{
  memset(request, 0, sizeof(*request));
  if (error && error_size > 0) {
    va_list args;
    va_start(args, format);
    int used = vsnprintf(error, error_size, format, args);
    va_end(args);
    if (used >= 0 && (size_t)used < error_size)
      snprintf(error + used, error_size - (size_t)used, "; expected --network=%s",
               TOPO_NETWORK_USAGE);
  }
  return -1;
}

/*
 * What a message quotes of the user's text: enough to find the mistake,
 * short enough that the syntax hint after it survives a small buffer and a
 * megabyte option does not become a megabyte log line.
 */
#define QUOTE_MAX 64
static int quote_len(size_t len)
{
  return len > QUOTE_MAX ? QUOTE_MAX : (int)len;
}

/* A key of ours, or one that looks like a misspelling of "topo-aware". */
static bool is_our_key(const char *key, size_t key_len)
{
  return same_word(key, key_len, "profile") || same_word(key, key_len, "maxleaves") ||
         same_word(key, key_len, "pod") || starts_with(key, key_len, "topo");
}

static int parse_max_leaves(const char *value, size_t len, uint32_t *out)
{
  if (len == 0 || len > 10)
    return -1;
  uint64_t n = 0;
  for (size_t i = 0; i < len; ++i) {
    if (value[i] < '0' || value[i] > '9')
      return -1;
    n = n * 10 + (uint64_t)(value[i] - '0');
  }
  if (n < 1 || n > TOPO_NETWORK_MAX_LEAVES)
    return -1;
  *out = (uint32_t)n;
  return 0;
}

int topo_network_parse(const char *network, struct topo_network_request *request, char *error,
                       size_t error_size)
{
  struct topo_network_request parsed = {0};
  bool has_ours = false; /* a token of ours other than topo-aware */
  const char *first_ours = NULL;
  size_t first_ours_len = 0;
  const char *foreign = NULL; /* a token of some other plugin */
  size_t foreign_len = 0;
  bool seen_profile = false, seen_max_leaves = false, seen_pod = false;

  if (error && error_size > 0)
    error[0] = '\0';
  memset(request, 0, sizeof(*request));
  if (!network || !network[0])
    return 0;

  const char *token = network;
  for (;;) {
    const char *end = strchr(token, ',');
    size_t len = end ? (size_t)(end - token) : strlen(token);
    const char *eq = memchr(token, '=', len);
    size_t key_len = eq ? (size_t)(eq - token) : len;
    const char *value = eq ? eq + 1 : NULL;
    size_t value_len = eq ? len - key_len - 1 : 0;

    if (len == 0) {
      if (parsed.topo_aware || has_ours)
        return fail(request, error, error_size, "empty item in --network=%.*s",
                    quote_len(strlen(network)), network);
    } else if (same_word(token, key_len, "topo-aware") && value) {
      return fail(request, error, error_size, "topo-aware takes no value, got '%.*s'",
                  quote_len(len), token);
    } else if (same_word(token, len, "topo-aware")) {
      if (parsed.topo_aware)
        return fail(request, error, error_size, "topo-aware given twice in --network=%.*s",
                    quote_len(strlen(network)), network);
      parsed.topo_aware = true;
    } else if (!is_our_key(token, key_len)) {
      if (!foreign) {
        foreign = token;
        foreign_len = len;
      }
    } else {
      if (!has_ours) {
        first_ours = token;
        first_ours_len = len;
      }
      has_ours = true;
      if (same_word(token, key_len, "profile")) {
        if (seen_profile)
          return fail(request, error, error_size, "profile given twice");
        seen_profile = true;
        if (value && same_word(value, value_len, "allreduce"))
          parsed.profile = TOPO_PROFILE_ALLREDUCE;
        else if (value && same_word(value, value_len, "alltoall"))
          parsed.profile = TOPO_PROFILE_ALLTOALL;
        else if (value && same_word(value, value_len, "mixed"))
          parsed.profile = TOPO_PROFILE_MIXED;
        else
          return fail(request, error, error_size,
                      "unknown profile '%.*s' (allowed: allreduce, alltoall, mixed)",
                      quote_len(value_len), value ? value : "");
      } else if (same_word(token, key_len, "maxleaves")) {
        if (seen_max_leaves)
          return fail(request, error, error_size, "maxleaves given twice");
        seen_max_leaves = true;
        if (!value || parse_max_leaves(value, value_len, &parsed.max_leaves) != 0)
          return fail(request, error, error_size,
                      "maxleaves needs a whole number from 1 to %u, not '%.*s'",
                      TOPO_NETWORK_MAX_LEAVES, quote_len(value_len), value ? value : "");
      } else if (same_word(token, key_len, "pod")) {
        if (seen_pod)
          return fail(request, error, error_size, "pod given twice");
        if (value)
          return fail(request, error, error_size, "pod takes no value, got '%.*s'", quote_len(len),
                      token);
        seen_pod = true;
        parsed.pod = true;
      } else {
        return fail(request, error, error_size, "unknown item '%.*s' (did you mean topo-aware?)",
                    quote_len(len), token);
      }
    }
    if (!end)
      break;
    token = end + 1;
  }

  if (has_ours && !parsed.topo_aware)
    return fail(request, error, error_size, "'%.*s' needs topo-aware in the same --network",
                quote_len(first_ours_len), first_ours);
  if (parsed.topo_aware && foreign)
    return fail(request, error, error_size, "unknown item '%.*s' beside topo-aware",
                quote_len(foreign_len), foreign);
  *request = parsed;
  return 0;
}

const char *topo_profile_name(enum topo_profile profile)
{
  switch (profile) {
    case TOPO_PROFILE_ALLREDUCE:
      return "allreduce";
    case TOPO_PROFILE_ALLTOALL:
      return "alltoall";
    case TOPO_PROFILE_MIXED:
      return "mixed";
    case TOPO_PROFILE_DEFAULT:
      break;
  }
  return "default";
}
