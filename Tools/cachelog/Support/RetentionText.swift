import CacheLog
import FeedCache

/// A retention policy in words, as `replay` and `cachelog retention` print it.
enum RetentionText {
    /// `history 30d, size limit 64MiB, image: 0s, contract films 90d, by cachelog (root)`.
    static func summary(_ policy: RetentionPolicy, by: String? = nil) -> String {
        var parts = [
            "history " + (policy.history.map(DurationText.string) ?? "for ever"),
            "size limit " + (policy.sizeLimit.map(RetentionPolicy.sizeText) ?? "none"),
        ]
        for override in policy.overrides {
            let window = DurationText.string(override.history)
            switch override.match {
            case .keyPrefix(let prefix): parts.append("keys \(EventPrinter.escaped(prefix))… \(window)")
            case .contract(let contract): parts.append("contract \(EventPrinter.escaped(contract)) \(window)")
            }
        }
        if let by, !by.isEmpty { parts.append("by \(EventPrinter.escaped(by))") }
        return parts.joined(separator: ", ")
    }
}
