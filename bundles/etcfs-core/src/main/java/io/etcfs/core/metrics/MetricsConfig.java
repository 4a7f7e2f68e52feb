package io.etcfs.core.metrics;

import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

@ObjectClassDefinition(name = "etcfs metrics",
    description = "This node's Prometheus endpoint (configured only with --metrics)")
@interface MetricsConfig {
  @AttributeDefinition(description = "HOST:PORT to serve /metrics on")
  String address();

  @AttributeDefinition(description = "Refuse to start when the address cannot be bound; by"
      + " default the node starts without metrics and logs one line")
  boolean required() default false;
}
