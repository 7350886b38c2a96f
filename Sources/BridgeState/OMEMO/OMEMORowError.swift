/// An OMEMO row that cannot be read back (``OMEMORows``).
package struct OMEMORowError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = "OMEMO state: \(description)" }
}
