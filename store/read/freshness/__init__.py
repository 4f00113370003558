"""How a catalog knows its folders are current without reading everything: the kernel's change
feed, a folder's listing, its stamp, and the background sweep (store.read.catalog uses them)."""
