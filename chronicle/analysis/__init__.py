"""Pure analysis over the store: stitched series, day summaries, incidents."""
