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
         same_word(key, key_len, "pod") || same_word(key, key_len, "segment") ||
         starts_with(key, key_len, "topo");
}

/* A whole number from 1 to max, digits only. */
static int parse_count(const char *value, size_t len, uint32_t max, uint32_t *out)
{
  if (len == 0 || len > 10)
    return -1;
  uint64_t n = 0;
  for (size_t i = 0; i < len; ++i) {
    if (value[i] < '0' || value[i] > '9')
      return -1;
    n = n * 10 + (uint64_t)(value[i] - '0');
  }
  if (n < 1 || n > max)
    return -1;
  *out = (uint32_t)n;
  return 0;
}

/* One comma-separated item of the option, split at its first '='. */
struct item {
  const char *text;
  size_t len;
  size_t key_len;
  const char *value; /* NULL without '=' */
  size_t value_len;
};

static struct item item_at(const char *token, const char *end)
{
  struct item it;
  it.text = token;
  it.len = end ? (size_t)(end - token) : strlen(token);
  const char *eq = memchr(token, '=', it.len);
  it.key_len = eq ? (size_t)(eq - token) : it.len;
  it.value = eq ? eq + 1 : NULL;
  it.value_len = eq ? it.len - it.key_len - 1 : 0;
  return it;
}

/* What the items read so far have given, and where a failure is written. */
struct parse_state {
  const char *network;
  struct topo_network_request parsed;
  bool has_ours; /* a token of ours other than topo-aware */
  const char *first_ours;
  size_t first_ours_len;
  const char *foreign; /* a token of some other plugin */
  size_t foreign_len;
  bool seen_profile, seen_max_leaves, seen_pod, seen_segment;
  struct topo_network_request *request;
  char *error;
  size_t error_size;
};

#define FAIL(st, ...) fail((st)->request, (st)->error, (st)->error_size, __VA_ARGS__)

static int parse_profile_item(struct parse_state *st, const struct item *it)
{
  if (st->seen_profile)
    return FAIL(st, "profile given twice");
  st->seen_profile = true;
  if (it->value && same_word(it->value, it->value_len, "allreduce"))
    st->parsed.profile = TOPO_PROFILE_ALLREDUCE;
  else if (it->value && same_word(it->value, it->value_len, "alltoall"))
    st->parsed.profile = TOPO_PROFILE_ALLTOALL;
  else if (it->value && same_word(it->value, it->value_len, "mixed"))
    st->parsed.profile = TOPO_PROFILE_MIXED;
  else
    return FAIL(st, "unknown profile '%.*s' (allowed: allreduce, alltoall, mixed)",
                quote_len(it->value_len), it->value ? it->value : "");
  return 0;
}

static int parse_max_leaves_item(struct parse_state *st, const struct item *it)
{
  if (st->seen_max_leaves)
    return FAIL(st, "maxleaves given twice");
  st->seen_max_leaves = true;
  if (!it->value ||
      parse_count(it->value, it->value_len, TOPO_NETWORK_MAX_LEAVES, &st->parsed.max_leaves) != 0)
    return FAIL(st, "maxleaves needs a whole number from 1 to %u, not '%.*s'",
                TOPO_NETWORK_MAX_LEAVES, quote_len(it->value_len), it->value ? it->value : "");
  return 0;
}

static int parse_pod_item(struct parse_state *st, const struct item *it)
{
  if (st->seen_pod)
    return FAIL(st, "pod given twice");
  if (it->value)
    return FAIL(st, "pod takes no value, got '%.*s'", quote_len(it->len), it->text);
  st->seen_pod = true;
  st->parsed.pod = true;
  return 0;
}

static int parse_segment_item(struct parse_state *st, const struct item *it)
{
  if (st->seen_segment)
    return FAIL(st, "segment given twice");
  st->seen_segment = true;
  if (!it->value ||
      parse_count(it->value, it->value_len, TOPO_NETWORK_MAX_SEGMENT, &st->parsed.segment) != 0)
    return FAIL(st, "segment needs a whole number of hosts from 1 to %u, not '%.*s'",
                TOPO_NETWORK_MAX_SEGMENT, quote_len(it->value_len), it->value ? it->value : "");
  return 0;
}

/* An item whose key is ours (is_our_key), other than topo-aware. */
static int parse_our_item(struct parse_state *st, const struct item *it)
{
  if (!st->has_ours) {
    st->first_ours = it->text;
    st->first_ours_len = it->len;
  }
  st->has_ours = true;
  if (same_word(it->text, it->key_len, "profile"))
    return parse_profile_item(st, it);
  if (same_word(it->text, it->key_len, "maxleaves"))
    return parse_max_leaves_item(st, it);
  if (same_word(it->text, it->key_len, "pod"))
    return parse_pod_item(st, it);
  if (same_word(it->text, it->key_len, "segment"))
    return parse_segment_item(st, it);
  return FAIL(st, "unknown item '%.*s' (did you mean topo-aware?)", quote_len(it->len), it->text);
}

static int parse_item(struct parse_state *st, const struct item *it)
{
  const char *network = st->network;
  if (it->len == 0) {
    if (st->parsed.topo_aware || st->has_ours)
      return FAIL(st, "empty item in --network=%.*s", quote_len(strlen(network)), network);
    return 0;
  }
  if (same_word(it->text, it->key_len, "topo-aware") && it->value)
    return FAIL(st, "topo-aware takes no value, got '%.*s'", quote_len(it->len), it->text);
  if (same_word(it->text, it->len, "topo-aware")) {
    if (st->parsed.topo_aware)
      return FAIL(st, "topo-aware given twice in --network=%.*s", quote_len(strlen(network)),
                  network);
    st->parsed.topo_aware = true;
    return 0;
  }
  if (is_our_key(it->text, it->key_len))
    return parse_our_item(st, it);
  if (!st->foreign) {
    st->foreign = it->text;
    st->foreign_len = it->len;
  }
  return 0;
}

/* What only the whole option shows: our items without topo-aware, or
 * topo-aware beside another plugin's. */
static int check_whole(struct parse_state *st)
{
  if (st->has_ours && !st->parsed.topo_aware)
    return FAIL(st, "'%.*s' needs topo-aware in the same --network", quote_len(st->first_ours_len),
                st->first_ours);
  if (st->parsed.topo_aware && st->foreign)
    return FAIL(st, "unknown item '%.*s' beside topo-aware", quote_len(st->foreign_len),
                st->foreign);
  return 0;
}

int topo_network_parse(const char *network, struct topo_network_request *request, char *error,
                       size_t error_size)
{
  struct parse_state st = {0};
  st.network = network;
  st.request = request;
  st.error = error;
  st.error_size = error_size;

  if (error && error_size > 0)
    error[0] = '\0';
  memset(request, 0, sizeof(*request));
  if (!network || !network[0])
    return 0;

  const char *token = network;
  for (;;) {
    const char *end = strchr(token, ',');
    struct item it = item_at(token, end);
    if (parse_item(&st, &it) != 0)
      return -1;
    if (!end)
      break;
    token = end + 1;
  }
  if (check_whole(&st) != 0)
    return -1;
  *request = st.parsed;
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
