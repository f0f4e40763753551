#include "ceph/wire/mirroring.hpp"

#include <utility>

#include "ceph/wire/encoding.hpp"
#include "inventory/librbd_names.hpp"

namespace rbdsync::ceph {

namespace {

constexpr std::uint8_t k_state_disabled = 2;
constexpr std::uint8_t k_mode_journal = 0;
constexpr std::uint8_t k_mode_snapshot = 1;
constexpr std::uint8_t k_snapshot_primary = 0;

}  // namespace

std::string mirror_image_key(const std::string& image_id) {
  return "image_" + image_id;
}

std::optional<MirrorImageEntry> decode_mirror_image(const std::string& bytes) {
  // MirrorImage: ENCODE_START(2, 1) { global image id, u8 state, (v2) u8 mode }; version 1
  // is journal mode. A later version may add fields after these, which the envelope skips.
  Decoder outer(bytes);
  std::uint8_t version = 0;
  Decoder in = outer.envelope(1, &version);
  MirrorImageEntry entry;
  entry.global_id = in.text();
  entry.state = in.number<std::uint8_t>();
  entry.mode = version >= 2 ? in.number<std::uint8_t>() : k_mode_journal;
  if (!outer.at_end() || version < 1) {
    return std::nullopt;
  }
  return entry;
}

OrFallback<std::optional<inventory::Mirroring>> image_mirroring(
    const MirrorImageEntry* entry, const std::vector<HeaderSnapshot>& snapshots) {
  using Result = OrFallback<std::optional<inventory::Mirroring>>;
  // librbd reports an image without an entry as disabled, and the librbd reader records
  // no mirroring for a disabled image.
  if (entry == nullptr || entry->state == k_state_disabled) {
    return Result::of(std::nullopt);
  }
  if (entry->mode == k_mode_journal) {
    return Result::fall_back(Fallback::mirroring_journal_mode);
  }
  if (entry->mode != k_mode_snapshot) {
    return Result::fall_back(Fallback::mirroring_mode_unknown, std::to_string(entry->mode));
  }
  // librbd's GetInfoRequest: the promotion state is that of the latest mirror snapshot,
  // and only a primary one makes the image primary (none at all: unknown, not primary).
  bool primary = false;
  for (auto snap = snapshots.rbegin(); snap != snapshots.rend(); ++snap) {
    if (snap->mirror) {
      primary = snap->mirror->state == k_snapshot_primary;
      break;
    }
  }
  return Result::of(inventory::Mirroring{inventory::image_mirror_mode_name(entry->mode),
                                         inventory::mirror_image_state_name(entry->state),
                                         entry->global_id, primary});
}

}  // namespace rbdsync::ceph
