package org.dpdl4j.federated.grpc;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import org.dpdl4j.federated.Messages.Hello;
import org.dpdl4j.federated.Messages.KeyAdvertisement;
import org.dpdl4j.federated.Messages.MaskedInput;
import org.dpdl4j.federated.Messages.RoundKeys;
import org.dpdl4j.federated.Messages.RoundOutcome;
import org.dpdl4j.federated.Messages.SessionInfo;

/** The gRPC service "dpdl4j.DpHype": its three unary methods and their JSON marshallers. */
final class DpHypeService {
    static final String NAME = "dpdl4j.DpHype";
    private static final ObjectMapper JSON = new ObjectMapper().enable(DeserializationFeature.FAIL_ON_NULL_FOR_PRIMITIVES);

    static final MethodDescriptor<Hello, SessionInfo> HELLO = method("Hello", Hello.class, SessionInfo.class);
    static final MethodDescriptor<KeyAdvertisement, RoundKeys> ADVERTISE = method("Advertise", KeyAdvertisement.class, RoundKeys.class);
    static final MethodDescriptor<MaskedInput, RoundOutcome> SUBMIT = method("Submit", MaskedInput.class, RoundOutcome.class);

    private DpHypeService() {
    }

    private static <Q, R> MethodDescriptor<Q, R> method(String name, Class<Q> request, Class<R> response) {
        return MethodDescriptor.<Q, R>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName(MethodDescriptor.generateFullMethodName(NAME, name))
                .setRequestMarshaller(new Json<>(request))
                .setResponseMarshaller(new Json<>(response))
                .build();
    }

    private record Json<T>(Class<T> type) implements MethodDescriptor.Marshaller<T> {
        @Override
        public InputStream stream(T value) {
            try {
                return new ByteArrayInputStream(JSON.writeValueAsBytes(value));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public T parse(InputStream stream) {
            try {
                return JSON.readValue(stream, type);
            } catch (IOException e) {
                throw new IllegalArgumentException("malformed " + type.getSimpleName() + " message: " + e.getMessage(), e);
            }
        }
    }
}
