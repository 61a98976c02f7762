// What `topoctl serve` reads from a request itself (page_request.h): the
// framing of a head, the Host, the one byte range, the page's numbers.
#include "tools/topoctl/page_request.h"

#include <gtest/gtest.h>

namespace topoctl {
namespace {

using V = Head::Verdict;

TEST(ScanHead, FindsTheEndOfAHeadAndWhatFollows) {
  std::string head = "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
  Head h = scan_head(head + "GET /next HTTP/1.1\r\n");
  EXPECT_EQ(h.verdict, V::Complete);
  EXPECT_EQ(h.size, head.size());
  EXPECT_EQ(h.method, "GET");
  EXPECT_FALSE(h.body);
  EXPECT_TRUE(h.keep_alive);
  EXPECT_EQ(scan_head(head.substr(0, head.size() - 1)).verdict, V::Incomplete);
  EXPECT_EQ(scan_head("GET / HTTP/1.1\r").verdict, V::Incomplete);
  EXPECT_EQ(scan_head("").verdict, V::Incomplete);
}

TEST(ScanHead, ABodyEndsTheConnection) {
  Head h = scan_head("GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 12\r\n\r\nGET / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(h.verdict, V::Complete);
  EXPECT_TRUE(h.body);
  EXPECT_FALSE(h.keep_alive);
  EXPECT_TRUE(scan_head("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").body);
  EXPECT_TRUE(scan_head("GET / HTTP/1.1\r\ncontent-length: 00100000000000000000000000000\r\n\r\n").body);
  Head empty = scan_head("GET / HTTP/1.1\r\nContent-Length: 000\r\n\r\n");
  EXPECT_FALSE(empty.body);
  EXPECT_TRUE(empty.keep_alive);
  EXPECT_EQ(scan_head("GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n").verdict, V::Malformed);
  EXPECT_EQ(scan_head("GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n").verdict, V::Malformed);
  EXPECT_EQ(scan_head("GET / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n").verdict, V::Malformed);
}

TEST(ScanHead, ConnectionAndVersionSayWhetherAnotherRequestFollows) {
  EXPECT_FALSE(scan_head("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n").keep_alive);
  EXPECT_FALSE(scan_head("GET / HTTP/1.1\r\nConnection: foo, close\r\n\r\n").keep_alive);
  EXPECT_FALSE(scan_head("GET / HTTP/1.0\r\n\r\n").keep_alive);
  EXPECT_TRUE(scan_head("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").keep_alive);
}

TEST(ScanHead, RefusesWhatTwoParsersCouldReadTwoWays) {
  for (const char* bad :
       {"GET / HTTP/1.1\n\n", "GET / HTTP/1.1\r\nHost: a\n\r\n\r\n", "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n",
        "GET / HTTP/1.1\r\nHost : a\r\n\r\n", "GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n",
        "GET / HTTP/2.0\r\n\r\n", "GET /\r\n\r\n", "G(T / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nA: \x01\r\n\r\n",
        "\r\nGET / HTTP/1.1\r\n\r\n"})
    EXPECT_EQ(scan_head(bad).verdict, V::Malformed) << bad;
  std::string nul = std::string("GET / HTTP/1.1\r\nA: ") + '\0' + "\r\n\r\n";
  EXPECT_EQ(scan_head(nul).verdict, V::Malformed);
  // Refused as soon as it arrives, before the head is whole.
  EXPECT_EQ(scan_head("GET / HTTP/1.1\nHost").verdict, V::Malformed);
}

TEST(ScanHead, CapsFieldsSizeAndTarget) {
  HeadLimits limits;
  std::string fields;
  for (size_t i = 0; i < limits.max_fields; ++i) fields += "A: b\r\n";
  EXPECT_EQ(scan_head("GET / HTTP/1.1\r\n" + fields + "\r\n").verdict, V::Complete);
  EXPECT_EQ(scan_head("GET / HTTP/1.1\r\n" + fields + "A: b\r\n\r\n").verdict, V::TooLarge);
  EXPECT_EQ(scan_head("GET / HTTP/1.1\r\n" + fields + "A: b\r\nA: b\r\n").verdict, V::TooLarge) << "before the end";
  EXPECT_EQ(scan_head("GET / HTTP/1.1\r\nA: " + std::string(limits.max_bytes, 'x')).verdict, V::TooLarge);
  EXPECT_EQ(scan_head("GET / HTTP/1.1\r\nA: " + std::string(limits.max_bytes, 'x') + "\r\n\r\n").verdict, V::TooLarge);
  EXPECT_EQ(scan_head("GET /" + std::string(limits.max_target, 'a') + " HTTP/1.1\r\n\r\n").verdict, V::LongTarget);
}

TEST(ScanHead, OneShortRangeAtMost) {
  EXPECT_EQ(scan_head("GET / HTTP/1.1\r\nRange: bytes=0-9\r\n\r\n").verdict, V::Complete);
  EXPECT_EQ(scan_head("GET / HTTP/1.1\r\nRange: bytes=0-1,3-4\r\n\r\n").verdict, V::ManyRanges);
  EXPECT_EQ(scan_head("GET / HTTP/1.1\r\nRange: bytes=0-1\r\nrange: bytes=3-4\r\n\r\n").verdict, V::ManyRanges);
  EXPECT_EQ(scan_head("GET / HTTP/1.1\r\nRange: bytes=" + std::string(100, '0') + "-\r\n\r\n").verdict, V::ManyRanges);
}

TEST(HostPolicy, AcceptsTheListenAddressLoopbackAndAddedNames) {
  HostPolicy p("127.0.0.1", {"Topo.Example.org."});
  for (const char* ok : {"127.0.0.1", "127.0.0.1:8650", "localhost", "LOCALHOST:1", "localhost.", "[::1]", "[::1]:80",
                         "127.0.0.2", "topo.example.org", "topo.example.org:443", "[::ffff:127.0.0.1]"})
    EXPECT_TRUE(p.allows(ok)) << ok;
  for (const char* bad :
       {"", "attacker.example", "127.0.0.1.attacker.example", "localhost.attacker.example", "10.0.0.5", "[::2]", "::1",
        "a b", "topo.example.org:x", "[::1", "[::1]x", "host:123456", "exa_mple.org@evil"})
    EXPECT_FALSE(p.allows(bad)) << bad;
}

TEST(HostPolicy, AWildcardListenAcceptsAddressLiteralsOnly) {
  HostPolicy any("0.0.0.0", {});
  EXPECT_TRUE(any.allows("10.0.0.5:8650"));
  EXPECT_TRUE(any.allows("[fe80::1]"));
  EXPECT_FALSE(any.allows("attacker.example"));
  HostPolicy named("gpu-head.example", {});
  EXPECT_TRUE(named.allows("GPU-HEAD.example:8650"));
  EXPECT_FALSE(named.allows("10.0.0.5"));
  HostPolicy v6("::1", {});
  EXPECT_TRUE(v6.allows("[::1]:8650"));
}

TEST(ByteRange, ServesOneRangeClampedToTheBody) {
  ByteRange r;
  EXPECT_EQ(byte_range("bytes=0-9", 100, r), RangeAnswer::Part);
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(r.last, 9u);
  EXPECT_EQ(byte_range("bytes=90-", 100, r), RangeAnswer::Part);
  EXPECT_EQ(r.last, 99u);
  EXPECT_EQ(byte_range("bytes=5-99999999999999999999999", 100, r), RangeAnswer::Part);
  EXPECT_EQ(r.first, 5u);
  EXPECT_EQ(r.last, 99u);
  EXPECT_EQ(byte_range("bytes=-10", 100, r), RangeAnswer::Part);
  EXPECT_EQ(r.first, 90u);
  EXPECT_EQ(byte_range("bytes=-1000", 100, r), RangeAnswer::Part);
  EXPECT_EQ(r.first, 0u);
  EXPECT_EQ(r.last, 99u);
}

TEST(ByteRange, RefusesWhatStartsPastTheEndAndIgnoresTheRest) {
  ByteRange r;
  EXPECT_EQ(byte_range("bytes=100-", 100, r), RangeAnswer::Unsatisfiable);
  EXPECT_EQ(byte_range("bytes=99999999999999999999999-", 100, r), RangeAnswer::Unsatisfiable);
  EXPECT_EQ(byte_range("bytes=-0", 100, r), RangeAnswer::Unsatisfiable);
  EXPECT_EQ(byte_range("bytes=0-", 0, r), RangeAnswer::Unsatisfiable);
  for (const char* ignored : {"", "items=0-1", "bytes=9-1", "bytes=a-b", "bytes=0-1,2-3", "bytes=-", "bytes=1"})
    EXPECT_EQ(byte_range(ignored, 100, r), RangeAnswer::Whole) << ignored;
}

TEST(PageParameters, NumbersAndNames) {
  EXPECT_EQ(job_number("4242"), 4242u);
  EXPECT_EQ(job_number("999999999"), 999999999u);
  EXPECT_FALSE(job_number("1234567890"));
  EXPECT_FALSE(job_number(""));
  EXPECT_FALSE(job_number("-1"));
  EXPECT_EQ(pod_number("3"), 3);
  EXPECT_FALSE(pod_number("1234567"));
  EXPECT_FALSE(pod_number("x"));
  EXPECT_TRUE(plain_name("run-1.svg"));
  for (const char* bad : {"", ".", "..", ".hidden", "a/b", "a%2fb", "a b"}) EXPECT_FALSE(plain_name(bad)) << bad;
  EXPECT_FALSE(plain_name(std::string(129, 'a')));
}

}  // namespace
}  // namespace topoctl
