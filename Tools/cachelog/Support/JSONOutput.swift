import CacheLogReports
import FeedCacheLog
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The one JSON writer of the CLI's reports: compact, on one line, an object's keys in the order
/// `encode(to:)` writes them (or sorted, for feed items), dates as `DateParsing.string`, numbers,
/// strings and non-finite values as ``JSONText`` writes them.
///
/// Not `JSONEncoder`: this platform's Foundation writes an object's keys in hash order, a
/// different order on each run, and scripts and the README rely on the order of the reports.
/// Its `.sortedKeys` would sort every report alphabetically.
struct JSONOutput {
    enum KeyOrder { case encoded, sorted }

    var keyOrder = KeyOrder.encoded

    func encode<Value: Encodable>(_ value: Value) throws -> [UInt8] {
        let root = JSONNode()
        try root.encode(value, codingPath: [])
        var bytes: [UInt8] = []
        root.write(to: &bytes, sorted: keyOrder == .sorted)
        return bytes
    }

    func string<Value: Encodable>(_ value: Value) throws -> String {
        String(decoding: try encode(value), as: UTF8.self)
    }
}

/// A value being encoded: a class, so that a container handed out earlier keeps filling the same
/// object or array.
private final class JSONNode {
    private enum Content { case unset, text([UInt8]), object, array }

    private var content = Content.unset
    /// Appended, never merged: keys that differ only in Unicode normalization are distinct keys
    /// in the log, and `String ==` would merge them.
    private var members: [(key: String, value: JSONNode)] = []
    private var elements: [JSONNode] = []

    func encode<Value: Encodable>(_ value: Value, codingPath: [any CodingKey]) throws {
        switch value {
        case let value as String: text(JSONText.string(value))
        case let value as Bool: text(value ? "true" : "false")
        case let value as Double: text(JSONText.number(value))
        // Through its shortest text, so that 0.1 as a Float is 0.1, not 0.10000000149011612.
        case let value as Float: text(JSONText.number(Double(String(value)) ?? Double(value)))
        case let value as any BinaryInteger: text(String(describing: value))
        case let value as Date: text(JSONText.date(value))
        case let value as URL: text(JSONText.string(value.absoluteString))
        case let value as RawJSON: content = .text(value.bytes)
        default: try value.encode(to: NodeEncoder(node: self, codingPath: codingPath))
        }
    }

    func encodeNil() { text("null") }

    private func text(_ text: String) { content = .text(Array(text.utf8)) }

    func member(_ key: String) -> JSONNode {
        if case .object = content {} else { content = .object }
        let node = JSONNode()
        members.append((key, node))
        return node
    }

    func element() -> JSONNode {
        if case .array = content {} else { content = .array }
        let node = JSONNode()
        elements.append(node)
        return node
    }

    var count: Int { elements.count }

    /// Makes this an object (or array) even if nothing is put in it: `{}`, not nothing.
    func becomeObject() { if case .unset = content { content = .object } }
    func becomeArray() { if case .unset = content { content = .array } }

    func write(to bytes: inout [UInt8], sorted: Bool) {
        switch content {
        case .unset: bytes.append(contentsOf: "null".utf8)
        case .text(let text): bytes.append(contentsOf: text)
        case .array:
            bytes.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                element.write(to: &bytes, sorted: sorted)
            }
            bytes.append(UInt8(ascii: "]"))
        case .object:
            bytes.append(UInt8(ascii: "{"))
            let ordered = sorted ? members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) } : members
            for (index, member) in ordered.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                JSONText.appendString(member.key, to: &bytes)
                bytes.append(UInt8(ascii: ":"))
                member.value.write(to: &bytes, sorted: sorted)
            }
            bytes.append(UInt8(ascii: "}"))
        }
    }
}

private struct NodeEncoder: Encoder {
    let node: JSONNode
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        node.becomeObject()
        return KeyedEncodingContainer(KeyedNodeContainer(node: node, codingPath: codingPath))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        node.becomeArray()
        return UnkeyedNodeContainer(node: node, codingPath: codingPath)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { SingleNodeContainer(node: node, codingPath: codingPath) }
}

/// The containers take every primitive through their generic `encode`, which ``JSONNode``
/// sorts out by type: one place decides how each kind of value is written.
private struct KeyedNodeContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let node: JSONNode
    let codingPath: [any CodingKey]

    mutating func encodeNil(forKey key: Key) throws { node.member(key.stringValue).encodeNil() }

    mutating func encode<Value: Encodable>(_ value: Value, forKey key: Key) throws {
        try node.member(key.stringValue).encode(value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        NodeEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        NodeEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { NodeEncoder(node: node.member("super"), codingPath: codingPath) }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        NodeEncoder(node: node.member(key.stringValue), codingPath: codingPath + [key])
    }
}

private struct UnkeyedNodeContainer: UnkeyedEncodingContainer {
    let node: JSONNode
    let codingPath: [any CodingKey]
    var count: Int { node.count }

    mutating func encodeNil() throws { node.element().encodeNil() }

    mutating func encode<Value: Encodable>(_ value: Value) throws { try node.element().encode(value, codingPath: codingPath) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        NodeEncoder(node: node.element(), codingPath: codingPath).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        NodeEncoder(node: node.element(), codingPath: codingPath).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder { NodeEncoder(node: node.element(), codingPath: codingPath) }
}

private struct SingleNodeContainer: SingleValueEncodingContainer {
    let node: JSONNode
    let codingPath: [any CodingKey]

    mutating func encodeNil() throws { node.encodeNil() }

    mutating func encode<Value: Encodable>(_ value: Value) throws { try node.encode(value, codingPath: codingPath) }
}
