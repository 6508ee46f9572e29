package com.acme.store;

public interface Store {
    String get(String key);
}
