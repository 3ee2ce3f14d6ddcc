// SHA-1 (FIPS 180-4) of a byte string, as lowercase hex: the name of a script in the script
// cache (EVALSHA, SCRIPT LOAD) and redis.sha1hex. Pure, any thread. Not for security: scripts
// are named by SHA-1 because Redis names them so.
#pragma once

#include <string>
#include <string_view>

namespace rockcache::server::scripting {

// The 40 lowercase hex digits of SHA-1(data).
std::string Sha1Hex(std::string_view data);

}  // namespace rockcache::server::scripting
