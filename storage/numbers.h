// storage/numbers — Redis-exact number parsing and formatting. Pure functions, any thread.
//
// The server may use these too (argument parsing, reply formatting) so that both layers agree
// byte for byte with Redis 7.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace rockcache::storage {

// Redis string2ll: optional '-', then "0" alone or a non-zero digit followed by digits; no
// spaces, no '+', no leading zeros, must fit int64. "-0" is rejected, as Redis does.
bool ParseInt64(std::string_view s, int64_t* out);

// Redis string2ld (INCRBYFLOAT, HINCRBYFLOAT operands): strtold over the whole string, no leading
// space, not empty, no NaN, no overflow to ±HUGE_VAL ("inf" itself is accepted).
bool ParseLongDouble(std::string_view s, long double* out);

// Redis getDoubleFromObject (scores, ZADD/ZINCRBY arguments): as ParseLongDouble, with double.
bool ParseDouble(std::string_view s, double* out);

// Redis ld2string(LD_STR_HUMAN): "%.17Lf" with trailing zeros (and a trailing '.') removed,
// "-0" printed as "0", "inf"/"-inf" for infinities. E.g. 10.6L -> "10.6", 3.0L -> "3".
std::string FormatLongDouble(long double value);

// Redis 7.2 addReplyDouble: whole numbers within ±LLONG_MAX/2 as integers (1.5e10 ->
// "15000000000"); otherwise fpconv_dtoa: the shortest string that round-trips, written plainly
// for moderate exponents and in scientific notation otherwise; "inf", "-inf", "nan". E.g.
// 1.5 -> "1.5", 1e7 -> "10000000", 1.5e10 -> "1.5e+10", 0.0001 -> "0.0001", 1e-7 -> "1e-7".
std::string FormatDouble(double value);

// A score as Redis 7.0 replies it: FormatDouble, except that negative zero is "-0" (addReplyDouble
// prints "%.17g"). Only computed scores can be -0 (ZUNION/ZINTER with a negative weight on a 0
// score, ZINCRBY/ZADD INCR of -0 on a new member): the store keeps +0, as Redis's listpack does.
std::string FormatScore(double value);

std::string FormatInt64(int64_t value);

}  // namespace rockcache::storage
