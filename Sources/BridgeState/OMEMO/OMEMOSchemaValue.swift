/// A value bound into an ``OMEMOSchema`` statement.
package enum OMEMOSchemaValue: Equatable, Sendable {
    case text(String)
    case integer(Int64)
}
