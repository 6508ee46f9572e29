module Acme
  module Money
    class Money
      attr_reader :cents

      def self.zero
        new(0)
      end

      def initialize(cents)
        @cents = cents
      end

      def plus(other)
        Money.new(cents + other.cents)
      end
    end
  end
end
