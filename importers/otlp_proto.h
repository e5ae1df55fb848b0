/*
 * otlp_proto.h - OTLP protobuf (ExportTraceServiceRequest,
 * ExportMetricsServiceRequest) for the importers and the receivers.
 *
 * A protobuf request is transcoded into the OTLP/JSON text of the same
 * request (the specification's JSON mapping: lowerCamelCase keys, trace
 * and span ids as hex, other bytes as base64, enums as numbers) and that
 * text goes through the OTLP/JSON importers unchanged, so both encodings
 * store exactly the same rows through one set of checks. The walk is driven
 * by the descriptors protoc-c generates from importers/proto/otlp.proto, so
 * field numbers and types come from one place.
 *
 * Error locations: the transcoder reports a broken wire (truncated varint,
 * a length past the end, a wire type the field cannot have, invalid UTF-8
 * in a string) at its byte offset. The JSON importers report their
 * semantic errors at a column of the JSON text; import_err_at() turns that
 * column back into the byte offset of the protobuf field it came from by
 * transcoding again up to that column (errors are rare, so nothing is
 * recorded on the way when all is well).
 *
 * Nothing here prints; everything is reentrant.
 */
#ifndef TT_OTLP_PROTO_H
#define TT_OTLP_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"

typedef enum OtlpSignal {
	OTLP_SIGNAL_UNKNOWN = 0,   /* not decided (e.g. an empty request) */
	OTLP_SIGNAL_TRACES = 1,    /* ExportTraceServiceRequest */
	OTLP_SIGNAL_METRICS = 2,   /* ExportMetricsServiceRequest */
} OtlpSignal;

/* Nesting limit of messages (AnyValue arrays and maps included). */
#define OTLP_PROTO_MAX_DEPTH 24

/* Appends the OTLP/JSON text (one line, no newline) of the request of
 * signal sig held in data (len bytes) to out. Returns 0, or -1 with msg
 * (msg_sz bytes) set and *off the byte offset in data where the input is
 * wrong. */
int otlp_proto_to_json(OtlpSignal sig, const uint8_t *data, size_t len, Buf *out,
                       uint64_t *off, char *msg, size_t msg_sz);

/* The byte offset in data of the protobuf field (or array item) that
 * became the JSON text at column json_off (0-based) of the text
 * otlp_proto_to_json() wrote for the same data. 0 when data does not
 * transcode. */
uint64_t otlp_proto_locate(OtlpSignal sig, const uint8_t *data, size_t len, size_t json_off);

/* Tells a trace request from a metrics request by its first span or metric
 * (a Span has fixed64 times, a Metric has a data field). Returns
 * OTLP_SIGNAL_UNKNOWN when the request holds neither (or is not protobuf). */
OtlpSignal otlp_proto_signal(const uint8_t *data, size_t len);

/* Appends an encoded ExportTraceServiceResponse (sig TRACES) or
 * ExportMetricsServiceResponse to out: empty when rejected is 0 and
 * message is NULL or "", else with partial_success. */
void otlp_proto_response(OtlpSignal sig, int64_t rejected, const char *message, Buf *out);

/* Appends an encoded google.rpc.Status {code, message} to out. */
void otlp_proto_status(int code, const char *message, Buf *out);

#endif
