#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A `DecodingError` said in words about a feed: which field, of which item, and what was wrong
/// with it (`item 1 has no "id"`, `"id" of item 0 is not a string`, `the payload is not valid
/// JSON`), instead of Swift's coding keys and debug descriptions.
///
/// A payload is a list of items, so the first index in the error's coding path is the item;
/// a path that does not start with one (a payload that is an object) is named as a whole.
public struct DecodingFailure: Sendable, Equatable, CustomStringConvertible {
    /// What was wrong.
    public enum Problem: Sendable, Equatable {
        /// The field is missing.
        case missing
        /// The value has another type; `expected` says which, in words ("a string").
        case wrongType(expected: String)
        /// The value is null where `expected` was required.
        case null(expected: String)
        /// The value has the right type but is not valid (a URL that does not parse).
        case invalidValue
        /// The payload is not JSON at all.
        case notJSON
    }

    /// The index of the item the failure is in; `nil` when it is not inside one item.
    public let item: Int?
    /// Where in the item (or the payload) the failure is, as `location.lat` or `genres[2].id`;
    /// `nil` for the item (or the payload) itself.
    public let field: String?
    /// What was wrong there.
    public let problem: Problem
    /// For a missing field: where it is missing from (`nil`: the item or the payload), and its name.
    private let container: String?, missingKey: String?

    /// Reads where and what from `error`'s coding path and case.
    public init(_ error: DecodingError) {
        var path: [any CodingKey]
        var missingKey: String?
        switch error {
        case .keyNotFound(let key, let context):
            path = context.codingPath + [key]
            missingKey = key.stringValue
            problem = .missing
        case .typeMismatch(let type, let context):
            path = context.codingPath
            problem = .wrongType(expected: Self.describe(type))
        case .valueNotFound(let type, let context):
            path = context.codingPath
            problem = .null(expected: Self.describe(type))
        case .dataCorrupted(let context):
            path = context.codingPath
            problem = path.isEmpty ? .notJSON : .invalidValue
        @unknown default:
            path = []
            problem = .invalidValue
        }
        item = path.first?.intValue
        if item != nil { path.removeFirst() }
        field = path.isEmpty ? nil : Self.place(path)
        self.missingKey = missingKey
        container = missingKey != nil && path.count > 1 ? Self.place(path.dropLast()) : nil
    }

    /// One clause, such as `"id" of item 1 is not a string`.
    public var description: String {
        let subject = switch (field, item) {
        case (let field?, let item?): "\"\(field)\" of item \(item)"
        case (nil, let item?): "item \(item)"
        case (let field?, nil): "\"\(field)\" of the payload"
        case (nil, nil): "the payload"
        }
        switch problem {
        case .missing:
            let owner = switch (container, item) {
            case (let container?, let item?): "\"\(container)\" of item \(item)"
            case (nil, let item?): "item \(item)"
            case (let container?, nil): "\"\(container)\" of the payload"
            case (nil, nil): "the payload"
            }
            return "\(owner) has no \"\(missingKey ?? field ?? "")\""
        case .wrongType(let expected): return "\(subject) is not \(expected)"
        case .null(let expected): return "\(subject) is null, not \(expected)"
        case .invalidValue: return "\(subject) is not a valid value"
        case .notJSON: return "\(subject) is not valid JSON"
        }
    }

    /// `location.lat`, `genres[2].id`.
    private static func place(_ path: some Sequence<any CodingKey>) -> String {
        var text = ""
        for key in path {
            if let index = key.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + key.stringValue }
        }
        return text
    }

    private static func describe(_ type: Any.Type) -> String {
        let name = "\(type)"
        if name.hasPrefix("Array<") { return "an array" }
        if name.hasPrefix("Dictionary<") { return "an object" }
        switch name {
        case "String", "UUID": return "a string"
        case "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Double", "Float", "Decimal":
            return "a number"
        case "Bool": return "true or false"
        case "URL": return "a URL"
        default: return "an object"
        }
    }
}
