#include "fabric/link_rate.h"

#include <gtest/gtest.h>

namespace topo {
namespace {

TEST(LinkRate, DataRatesFollowTheSpecAfterEncoding) {
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::X4, LinkSpeed::NDR}.gbps()), 400.0);
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::X4, LinkSpeed::HDR}.gbps()), 200.0);
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::X1, LinkSpeed::NDR}.gbps()), 100.0);
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::X4, LinkSpeed::QDR}.gbps()), 32.0);
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::X12, LinkSpeed::SDR}.gbps()), 24.0);
  EXPECT_DOUBLE_EQ((LinkRate{LinkWidth::X1, LinkSpeed::Eth400G}.gbps()), 400.0);
}

TEST(LinkRate, ParsesTheSpellingsInUse) {
  EXPECT_EQ(parse_rate("4xNDR"), (LinkRate{LinkWidth::X4, LinkSpeed::NDR}));
  EXPECT_EQ(parse_rate("4XHDR"), (LinkRate{LinkWidth::X4, LinkSpeed::HDR}));
  EXPECT_EQ(parse_rate("12xFDR10"), (LinkRate{LinkWidth::X12, LinkSpeed::FDR10}));
  EXPECT_EQ(parse_rate("100GbE"), (LinkRate{LinkWidth::X1, LinkSpeed::Eth100G}));
  EXPECT_EQ(parse_width("w=4"), LinkWidth::X4);
  EXPECT_EQ(parse_speed("ndr"), LinkSpeed::NDR);
  EXPECT_EQ(parse_speed("400G"), LinkSpeed::Eth400G);
  EXPECT_FALSE(parse_rate("4xBOGUS"));
  EXPECT_FALSE(parse_rate("3xNDR"));
  EXPECT_FALSE(parse_width("16x"));
}

TEST(LinkRate, PrintsWhatItParses) {
  for (const char* text : {"1xSDR", "4xEDR", "8xXDR", "200GbE"}) EXPECT_EQ(parse_rate(text)->str(), text);
}

}  // namespace
}  // namespace topo
