// The reply writers (server/protocol/reply.h): the RESP2 form Redis uses by default, the RESP3
// form under a ReplyProtocolScope, and the scope's restore.
#include "server/protocol/reply.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <string>

// This file's own namespace: in a unity build (scripts/unity-chunks.sh) the test files of a
// folder share one translation unit, and their helpers share names.
namespace rockcache::server::reply_test {
namespace {

// Everything the typed writers write, in one reply.
std::string Typed() {
  std::string out;
  AppendNull(&out);
  AppendNullArray(&out);
  AppendMapHeader(&out, 2);
  AppendSetHeader(&out, 3);
  AppendPushHeader(&out, 3);
  AppendDouble(&out, 1.5);
  AppendDouble(&out, INFINITY);
  AppendDouble(&out, -INFINITY);
  AppendDoubleText(&out, "0.25");
  AppendBool(&out, true);
  AppendBool(&out, false);
  AppendVerbatim(&out, "a\r\nb");
  AppendPairsHeader(&out, 2, true);
  AppendScoredMember(&out, "m", "2", true);
  AppendPairsHeader(&out, 2, false);
  AppendScoredMember(&out, "m", "", false);
  AppendPair(&out, "f", "v");
  return out;
}

TEST_CASE("Typed replies are RESP2 by default and RESP3 under a scope", "[reply]") {
  CHECK(ReplyProtocol() == Protocol::kResp2);
  CHECK(Typed() ==
        "$-1\r\n*-1\r\n*4\r\n*3\r\n*3\r\n$3\r\n1.5\r\n$3\r\ninf\r\n$4\r\n-inf\r\n$4\r\n0.25\r\n"
        ":1\r\n:0\r\n$4\r\na\r\nb\r\n*4\r\n$1\r\nm\r\n$1\r\n2\r\n*2\r\n$1\r\nm\r\n$1\r\nf\r\n"
        "$1\r\nv\r\n");
  {
    ReplyProtocolScope scope(Protocol::kResp3);
    CHECK(ReplyResp3());
    CHECK(Typed() ==
          "_\r\n_\r\n%2\r\n~3\r\n>3\r\n,1.5\r\n,inf\r\n,-inf\r\n,0.25\r\n#t\r\n#f\r\n"
          "=8\r\ntxt:a\r\nb\r\n*2\r\n*2\r\n$1\r\nm\r\n,2\r\n*2\r\n$1\r\nm\r\n*2\r\n$1\r\nf\r\n"
          "$1\r\nv\r\n");
    {
      ReplyProtocolScope inner(Protocol::kResp2);  // a script's redis.call inside a RESP3 call
      CHECK(!ReplyResp3());
    }
    CHECK(ReplyResp3());
    CHECK(NullBulkReply() == "_\r\n");
    CHECK(IsNilReply("_\r\n", 3));
  }
  CHECK(!ReplyResp3());
  CHECK(NullBulkReply() == "$-1\r\n");
  CHECK(NullArrayReply() == "*-1\r\n");
}

}  // namespace
}  // namespace rockcache::server::reply_test
