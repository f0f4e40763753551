# Every libFuzzer harness, once: NAME SECONDS LIBRARY. NAME is tests/fuzz/NAME.cpp;
# SECONDS, how long build-fuzz/ fuzzes it (most where the input has the most structure;
# their sum is what the fuzz label costs, docs/testing.md); LIBRARY, what it decodes
# with: ceph (the decoders of Ceph's bytes) or lock (the holder record).
# tests/fuzz/CMakeLists.txt fuzzes each;
# tests/CMakeLists.txt replays each one's findings and seeds in every other build.
set(RBDSYNC_FUZZ_HARNESSES
    "fuzz_header 20 ceph"
    "fuzz_lock_info 12 ceph"
    "fuzz_object_map 12 ceph"
    "fuzz_snapshot_record 10 ceph"
    "fuzz_migration_spec 10 ceph"
    "fuzz_holder_record 10 lock"
    "fuzz_child_ids 6 ceph"
    "fuzz_trash_name 6 ceph"
    "fuzz_mirror_image 6 ceph"
    "fuzz_directory_name 4 ceph"
    "fuzz_group_spec 4 ceph"
    "fuzz_fast_diff_chain 10 ceph"
    "fuzz_format1_directory 6 ceph"
    "fuzz_mon_answers 8 ceph")
