"""The write path: `chronicle snapshot` fetches every source, appends one snapshot to the
store and seals every closed day. The only stage besides site/ that touches the Store."""
