#pragma once

/// Which cipher a cephx key is for, read from the key itself: the keyring holds it in
/// base64, and its first two bytes are the type, little-endian (Ceph's CryptoKey
/// encoding). Ceph 20 (Tentacle, and Squid from 19.2.6) makes keys of type aes256k,
/// which older client libraries cannot read: the connection then fails with an
/// "Input/output error" that says nothing of why. This tells why.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rbdsync::ceph {

inline constexpr std::uint16_t k_key_type_aes = 1;
inline constexpr std::uint16_t k_key_type_aes256k = 2;

/// The type of the base64 key `key` (e.g. "AQB..." is aes, "AgB..." aes256k); nullopt
/// when it does not start with four base64 characters.
std::optional<std::uint16_t> key_type(std::string_view key);

/// The key of entity `name` (e.g. "client.admin") in keyring text `keyring` (sections
/// "[client.admin]" holding "key = ..."); nullopt when no section of that name has one.
std::optional<std::string> keyring_key(std::string_view keyring, std::string_view name);

/// "aes", "aes256k", or "type N" for a type this code does not name.
std::string key_type_name(std::uint16_t type);

}  // namespace rbdsync::ceph
