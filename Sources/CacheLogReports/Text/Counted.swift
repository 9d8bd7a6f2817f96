import CacheLog
import FeedCache
import FeedCacheLog
/// `1 checkpoint`, `2 checkpoints`, `0 records`: a count and its noun, singular only for one
/// (`plural` for nouns that do not take an s: `entries`).
package func counted(_ count: Int, _ noun: String, plural: String? = nil) -> String {
    "\(count) \(count == 1 ? noun : plural ?? noun + "s")"
}
