package io.etcfs.testing;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Map;

/**
 * Instances of a component's configuration annotation type for unit tests, built the way
 * Declarative Services builds them: each method answers the property of its name (DS's
 * {@code _} → {@code .} mapping applies), else its default, else null.
 */
public final class ComponentConfigs {
  private ComponentConfigs() {}

  public static <A extends Annotation> A of(Class<A> type, Map<String, ?> properties) {
    Object proxy = Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type},
        (self, method, args) -> answer(type, properties, method));
    return type.cast(proxy);
  }

  private static Object answer(Class<?> type, Map<String, ?> properties, Method method) {
    switch (method.getName()) {
      case "annotationType":
        return type;
      case "toString":
        return type.getSimpleName() + properties;
      case "hashCode":
        return properties.hashCode();
      case "equals":
        return false;
      default:
        break;
    }
    String name = method.getName();
    Object value = properties.containsKey(name) ? properties.get(name)
        : properties.get(name.replace("__", "\u0000").replace('_', '.').replace('\u0000', '_'));
    return value != null ? value : method.getDefaultValue();
  }
}
