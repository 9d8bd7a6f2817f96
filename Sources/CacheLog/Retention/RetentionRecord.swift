#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How a ``RetentionPolicy`` sits in a `retention` record: metadata entries (Format.md), so
/// that a reader in any language reads it as it reads a put's metadata.
///
///     history                  seconds, or "none" (kept for ever)
///     size-limit               bytes, or "none"
///     override.NNN.prefix      a key prefix (NNN: 000, 001, … in the policy's order)
///     override.NNN.contract    or a contract name
///     override.NNN.history     seconds
///     by                       who set it
enum RetentionRecord {
    static func metadata(_ policy: RetentionPolicy, by: String) -> [String: String] {
        var entries: [String: String] = [
            "history": policy.history.map { String(Int64($0)) } ?? "none",
            "size-limit": policy.sizeLimit.map { String($0) } ?? "none",
        ]
        // A name, not an essay: the metadata block has room for a few short entries only.
        if !by.isEmpty { entries["by"] = String(by.prefix(200)) }
        for (index, override) in policy.overrides.enumerated() {
            let name = "override." + String(repeating: "0", count: max(0, 3 - String(index).count)) + String(index)
            switch override.match {
            case .keyPrefix(let prefix): entries[name + ".prefix"] = prefix
            case .contract(let contract): entries[name + ".contract"] = contract
            }
            entries[name + ".history"] = String(Int64(override.history))
        }
        return entries
    }

    /// The policy and its author, or `nil` when the entries do not describe one.
    static func policy(_ metadata: [String: String]) -> (policy: RetentionPolicy, by: String)? {
        func seconds(_ text: String?) -> TimeInterval?? {
            guard let text else { return .none }
            if text == "none" { return .some(nil) }
            return Int64(text).map { .some(TimeInterval($0)) } ?? .none
        }
        guard let history = seconds(metadata["history"]), let sizeText = metadata["size-limit"] else { return nil }
        let sizeLimit: Int?
        if sizeText == "none" { sizeLimit = nil } else if let bytes = Int(sizeText) { sizeLimit = bytes } else { return nil }
        var overrides: [RetentionPolicy.Override] = []
        let names = Set(metadata.keys.compactMap { name -> String? in
            guard name.hasPrefix("override.") else { return nil }
            return name.split(separator: ".").dropFirst().first.map(String.init)
        }).sorted()
        for index in names {
            let base = "override.\(index)."
            guard let window = seconds(metadata[base + "history"]) ?? nil else { return nil }
            if let prefix = metadata[base + "prefix"] {
                overrides.append(.init(.keyPrefix(prefix), history: window))
            } else if let contract = metadata[base + "contract"] {
                overrides.append(.init(.contract(contract), history: window))
            } else {
                return nil
            }
        }
        return (RetentionPolicy(history: history, sizeLimit: sizeLimit, overrides: overrides), metadata["by"] ?? "")
    }
}
