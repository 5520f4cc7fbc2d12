#!/usr/bin/env bash
# Rewrites the committed scenes in scenes/ from the procedural generator. A test
# (scene::tests::committed_scenes_match_the_generator_byte_for_byte) fails when the
# generator and these files drift apart; run this after changing the generator.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release
bt=target/release/beamtrace
while read -r file spec; do
  "$bt" scene "$spec" --out "scenes/$file"
done <<'LIST'
street.glb street
plane.gltf plane
wall_10m.glb wall
box_room.glb box_room
sphere.glb sphere
step_edge.glb step_edge
foliage_stack.glb foliage_stack
glass_wall.glb glass_wall
retro_sign.glb retro_sign
tilted_plane.glb tilted_plane
LIST
