#include "common/text.hpp"

#include <cstdint>
#include <string>

#include <gtest/gtest.h>

namespace rbdsync {
namespace {

/// Undoes display_text() of text that was escaped: the documented reverse.
std::string unescape(const std::string& text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && text[i + 1] == '\\') {
      out += '\\';
      ++i;
    } else if (text[i] == '\\' && text[i + 1] == 'x') {
      out += static_cast<char>(std::stoi(text.substr(i + 2, 2), nullptr, 16));
      i += 3;
    } else {
      out += text[i];
    }
  }
  return out;
}

TEST(Text, ValidUtf8WithoutBackslashIsLeftExactlyAsItIs) {
  for (const std::string name :
       {"", "rbd", "caf\xc3\xa9", "tab\there", "new\nline", "\xf0\x9f\x92\xbe", "\xe2\x82\xac"}) {
    EXPECT_TRUE(is_plain_text(name)) << name;
    EXPECT_EQ(display_text(name), name);
  }
}

TEST(Text, ABackslashIsEscapedSoThatTheEscapeIsOneToOne) {
  // The four characters \xff and the byte 0xff must not share a display text: names
  // are parts of keys.
  EXPECT_FALSE(is_plain_text("\\xff"));
  EXPECT_EQ(display_text("\\xff"), "\\\\xff");
  EXPECT_EQ(display_text("\xff"), "\\xff");
  EXPECT_EQ(display_text("back\\slash"), "back\\\\slash");
  EXPECT_EQ(display_text("\\N"), "\\\\N");
  EXPECT_EQ(display_text("\\."), "\\\\.");
  EXPECT_EQ(unescape(display_text("\\xff")), "\\xff");
}

TEST(Text, APrintableLineIsValidUtf8WithoutAControlCharacter) {
  for (const char* name : {"alice", "Jos\xc3\xa9 O'Neil", "dom\\user", "a b", ""}) {
    EXPECT_TRUE(is_printable_line(name)) << name;
  }
  for (const std::string& name :
       {std::string("new\nline"), std::string("tab\t"), std::string("nul\0", 4),
        std::string("del\x7f"), std::string("csi\xc2\x9b"), std::string("caf\xe9")}) {
    EXPECT_FALSE(is_printable_line(name)) << display_text(name, Controls::escape);
  }
}

TEST(Text, Latin1BytesAreEscapedAndBackslashesDoubled) {
  const std::string latin1("caf\xe9 a\\b", 8);
  EXPECT_FALSE(is_plain_text(latin1));
  EXPECT_EQ(display_text(latin1), "caf\\xe9 a\\\\b");
  EXPECT_EQ(unescape(display_text(latin1)), latin1);
}

TEST(Text, NulAndEveryInvalidSequenceAreEscaped) {
  const std::string nul("a\0b", 3);
  EXPECT_FALSE(is_plain_text(nul));
  EXPECT_EQ(display_text(nul), "a\\x00b");
  // Overlong "/", a UTF-16 surrogate, above U+10FFFF, a truncated sequence, a lone
  // continuation byte: all invalid, each byte escaped on its own.
  EXPECT_EQ(display_text("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(display_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(display_text("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
  EXPECT_EQ(display_text("\xe2\x82"), "\\xe2\\x82");
  EXPECT_EQ(display_text("\x80z\xc3\xa9"), "\\x80z\xc3\xa9");
  for (const std::string& bytes : {std::string("\xc0\xaf"), std::string("x\xff\\\xfe", 4), nul}) {
    EXPECT_EQ(unescape(display_text(bytes)), bytes);
  }
}

TEST(Text, OneLineMessagesEscapeControlsToo) {
  EXPECT_EQ(display_text("a\nb\tc", Controls::escape), "a\\x0ab\\x09c");
  EXPECT_EQ(display_text("plain", Controls::escape), "plain");
  EXPECT_EQ(display_text("a\\b\n", Controls::escape), "a\\\\b\\x0a");
  EXPECT_EQ(display_text("a\nb", Controls::keep), "a\nb");
  // C1 controls (U+009B starts an escape sequence on some terminals), byte by byte.
  EXPECT_EQ(display_text("x\xc2\x9b"
                         "31m",
                         Controls::escape),
            "x\\xc2\\x9b31m");
  EXPECT_EQ(display_text("x\xc2\x9b"
                         "31m",
                         Controls::keep),
            "x\xc2\x9b"
            "31m");
  EXPECT_EQ(display_text("\xc2\xa0", Controls::escape), "\xc2\xa0");  // U+00A0: no control
}

TEST(Text, HexBytesAreTwoLowercaseDigitsAByte) {
  EXPECT_EQ(hex_bytes(std::string("\x00\xe9Z", 3)), "00e95a");
  EXPECT_EQ(hex_bytes(""), "");
}

TEST(Text, HexU64IsSixteenLowercaseDigitsMostSignificantFirst) {
  EXPECT_EQ(hex_u64(0), "0000000000000000");
  EXPECT_EQ(hex_u64(0xabc), "0000000000000abc");
  EXPECT_EQ(hex_u64(UINT64_MAX), "ffffffffffffffff");
  EXPECT_EQ(hex_u64(0x0123456789abcdefULL), "0123456789abcdef");
}

}  // namespace
}  // namespace rbdsync
