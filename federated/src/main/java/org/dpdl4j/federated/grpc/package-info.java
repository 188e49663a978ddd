/**
 * The networked transport: the coordinator served over gRPC (unary calls, JSON messages through
 * Jackson marshallers, so no generated code), and a client-side {@link org.dpdl4j.federated.SecureSumTransport}.
 * Refused messages travel as gRPC status INVALID_ARGUMENT (wrong length, wrong session, unknown client) or
 * FAILED_PRECONDITION (others) whose description starts with the {@link org.dpdl4j.federated.ProtocolException.Reason},
 * and are rethrown on the client as the same {@link org.dpdl4j.federated.ProtocolException}.
 * Channels are plaintext: deploy behind TLS with client certificates (see the threat model in
 * {@link org.dpdl4j.federated}).
 *
 * @serial exclude
 */
package org.dpdl4j.federated.grpc;
