import CacheLog
import FeedCache
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

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

    /// `the history of 420 keys needs about 1.5MB beside 8.2KB of live caches: the size limit of
    /// 1MiB cannot be met without dropping that history; the live caches stay`.
    static func unmet(_ unmet: UnmetSizeLimit) -> String {
        "the history of \(unmet.keys) \(unmet.keys == 1 ? "key" : "keys") needs about \(approximateSize(unmet.floorBytes)) "
            + "beside \(approximateSize(unmet.liveBytes)) of live caches: "
            + "the size limit of \(RetentionPolicy.sizeText(unmet.limit)) cannot be met without dropping that history; the live caches stay"
    }

    /// `1.5MB`, `640KB`, `12MB`: two significant figures, in the units of 1000.
    static func approximateSize(_ bytes: Int) -> String {
        let units: [(String, Double)] = [("GB", 1e9), ("MB", 1e6), ("KB", 1e3)]
        guard let (unit, size) = units.first(where: { Double(bytes) >= $0.1 }) else { return "\(bytes) bytes" }
        let value = Double(bytes) / size
        guard value < 10 else { return "\(Int(value.rounded()))" + unit }
        let tenths = Int((value * 10).rounded())
        return (tenths % 10 == 0 ? "\(tenths / 10)" : "\(tenths / 10).\(tenths % 10)") + unit
    }
}
