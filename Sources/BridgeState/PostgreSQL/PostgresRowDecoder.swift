import Foundation

/// Decodes one row PostgreSQL returned as text (``PostgresRows``) into a `Decodable` record
/// by its columns' names: the same records (``QueuedDeliveryRecord``, ``RelayRecord``…)
/// the SQLite store reads through GRDB, from the same column names. Numbers and booleans
/// (`t`/`f`) are parsed from their text, times from ``StorageTimestamp``; a value that does
/// not parse is a `DecodingError`, never a trap.
package struct PostgresRowDecoder: Decoder {
    package let columns: [String]
    package let values: [String?]
    package var codingPath: [any CodingKey] = []
    package var userInfo: [CodingUserInfoKey: Any] { [:] }

    package func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Row<Key>(decoder: self))
    }

    package func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: self.codingPath, debugDescription: "a row is read by column names"))
    }

    package func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: self.codingPath, debugDescription: "a row is read by column names"))
    }

    /// The text of column `key`, or nil for NULL; a missing column is an error.
    package func text(_ key: some CodingKey) throws -> String? {
        guard let index = self.columns.firstIndex(of: key.stringValue) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: self.codingPath, debugDescription: "no column \(key.stringValue)"))
        }
        return self.values[index]
    }

    private struct Row<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: PostgresRowDecoder
        var codingPath: [any CodingKey] { self.decoder.codingPath }
        var allKeys: [Key] { self.decoder.columns.compactMap(Key.init(stringValue:)) }

        func contains(_ key: Key) -> Bool { self.decoder.columns.contains(key.stringValue) }

        func decodeNil(forKey key: Key) throws -> Bool { try self.decoder.text(key) == nil }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            guard let text = try self.decoder.text(key) else {
                throw DecodingError.valueNotFound(type, .init(codingPath: self.codingPath + [key], debugDescription: "NULL in \(key.stringValue)"))
            }
            return try Value(text: text, codingPath: self.codingPath + [key]).decode(type)
        }

        func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
            throw DecodingError.typeMismatch(type, .init(codingPath: self.codingPath + [key], debugDescription: "a column holds one value"))
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw DecodingError.typeMismatch([Any].self, .init(codingPath: self.codingPath + [key], debugDescription: "a column holds one value"))
        }

        func superDecoder() throws -> any Decoder { self.decoder }
        func superDecoder(forKey key: Key) throws -> any Decoder { self.decoder }
    }

    /// One column's text, decoded as what the record asks for.
    private struct Value: Decoder, SingleValueDecodingContainer {
        let text: String
        var codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            let value: Any?
            switch type {
            case is String.Type: value = self.text
            case is Int.Type: value = Int(self.text)
            case is Int64.Type: value = Int64(self.text)
            case is Int32.Type: value = Int32(self.text)
            case is UInt32.Type: value = UInt32(self.text)
            case is Double.Type: value = Double(self.text)
            case is Bool.Type: value = ["t": true, "true": true, "1": true, "f": false, "false": false, "0": false][self.text]
            case is Date.Type: value = StorageTimestamp.date(self.text)
            default: return try T(from: self)
            }
            guard let typed = value as? T else {
                throw DecodingError.dataCorrupted(.init(codingPath: self.codingPath, debugDescription: "not a \(type): \(self.text.prefix(40))"))
            }
            return typed
        }

        func decodeNil() -> Bool { false }
        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            throw DecodingError.typeMismatch(type, .init(codingPath: self.codingPath, debugDescription: "a column holds one value"))
        }
        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            throw DecodingError.typeMismatch([Any].self, .init(codingPath: self.codingPath, debugDescription: "a column holds one value"))
        }
        func singleValueContainer() throws -> any SingleValueDecodingContainer { self }
    }

    package init(columns: [String], values: [String?], codingPath: [any CodingKey] = []) {
        self.columns = columns
        self.values = values
        self.codingPath = codingPath
    }
}
